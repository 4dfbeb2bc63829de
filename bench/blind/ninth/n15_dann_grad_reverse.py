"""DANN domain adaptation: gradient-reversal autograd.Function, Grad-CAM style feature hooks."""
import math
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.neg() * ctx.alpha, None


def grad_reverse(x, alpha=1.0):
    return GradReverse.apply(x, alpha)


class FeatureExtractor(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, 8, 5), nn.BatchNorm2d(8), nn.MaxPool2d(2), nn.ReLU(True),
            nn.Conv2d(8, 16, 5), nn.BatchNorm2d(16), nn.Dropout2d(0.1), nn.MaxPool2d(2), nn.ReLU(True))

    def forward(self, x):
        return self.conv(x)


class DANN(nn.Module):
    def __init__(self, n_classes=10):
        super().__init__()
        self.feature = FeatureExtractor()
        self.class_head = nn.Sequential(nn.Linear(16 * 4 * 4, 32), nn.ReLU(True), nn.Linear(32, n_classes))
        self.domain_head = nn.Sequential(nn.Linear(16 * 4 * 4, 32), nn.ReLU(True), nn.Linear(32, 2))
        self.feature_grads = {}

    def _save_grad(self, grad):
        self.feature_grads["feature"] = grad.detach()

    def forward(self, x, alpha):
        fmap = self.feature(x)
        if fmap.requires_grad:
            fmap.register_hook(self._save_grad)
        f = fmap.flatten(1)
        class_logits = self.class_head(f)
        domain_logits = self.domain_head(grad_reverse(f, alpha))
        return class_logits, domain_logits


def dann_alpha(p, gamma=10.0):
    return 2.0 / (1.0 + math.exp(-gamma * p)) - 1.0


def main():
    torch.manual_seed(0)
    random.seed(0)
    model = DANN()
    cmodel = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    n_epochs, steps = 2, 3
    for epoch in range(n_epochs):
        for i in range(steps):
            p = (epoch * steps + i) / (n_epochs * steps)
            alpha = dann_alpha(p)
            xs, ys = torch.randn(8, 1, 28, 28), torch.randint(0, 10, (8,))
            xt = torch.randn(8, 1, 28, 28) + 0.5
            cls_s, dom_s = cmodel(xs, alpha)
            _, dom_t = cmodel(xt, alpha)
            loss = (F.cross_entropy(cls_s, ys) + F.cross_entropy(dom_s, torch.zeros(8, dtype=torch.long))
                    + F.cross_entropy(dom_t, torch.ones(8, dtype=torch.long)))
            opt.zero_grad()
            loss.backward()
            opt.step()
    return loss.item(), tuple(model.feature_grads["feature"].shape)


if __name__ == "__main__":
    print(main())
