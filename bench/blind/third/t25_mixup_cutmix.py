"""Mixup / CutMix collate-time regularisation applied to a batch inside the compiled training forward."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def rand_bbox(h, w, lam, rng):
    cut_rat = np.sqrt(1.0 - lam)
    cut_h, cut_w = int(h * cut_rat), int(w * cut_rat)
    cy, cx = rng.integers(h), rng.integers(w)
    y1, y2 = np.clip(cy - cut_h // 2, 0, h), np.clip(cy + cut_h // 2, 0, h)
    x1, x2 = np.clip(cx - cut_w // 2, 0, w), np.clip(cx + cut_w // 2, 0, w)
    return int(y1), int(y2), int(x1), int(x2)


class MixupCutmix:
    def __init__(self, num_classes, mixup_alpha=0.8, cutmix_alpha=1.0, switch_prob=0.5, seed=0):
        self.num_classes = num_classes
        self.mixup_alpha = mixup_alpha
        self.cutmix_alpha = cutmix_alpha
        self.switch_prob = switch_prob
        self.rng = np.random.default_rng(seed)

    def __call__(self, x, y):
        y1 = F.one_hot(y, self.num_classes).float()
        y2 = y1.flip(0)
        if self.rng.random() < self.switch_prob:
            lam = float(self.rng.beta(self.cutmix_alpha, self.cutmix_alpha))
            t, b, l, r = rand_bbox(x.shape[2], x.shape[3], lam, self.rng)
            x = x.clone()
            x[:, :, t:b, l:r] = x.flip(0)[:, :, t:b, l:r]
            lam = 1 - (b - t) * (r - l) / (x.shape[2] * x.shape[3])
        else:
            lam = float(self.rng.beta(self.mixup_alpha, self.mixup_alpha))
            x = x * lam + x.flip(0) * (1 - lam)
        return x, y1 * lam + y2 * (1 - lam)


class Classifier(nn.Module):
    def __init__(self, n_classes=10):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4), nn.Flatten(),
                                 nn.Linear(128, n_classes))

    def forward(self, x):
        return self.net(x)


def soft_target_ce(logits, target):
    return torch.sum(-target * F.log_softmax(logits, dim=-1), dim=-1).mean()


def main():
    torch.manual_seed(0)
    model = Classifier()
    mix = MixupCutmix(10)

    @torch.compile(backend="eager")
    def forward_loss(x, y):
        x, y_soft = mix(x, y)
        return soft_target_ce(model(x), y_soft)

    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        loss = forward_loss(torch.rand(6, 3, 16, 16), torch.randint(0, 10, (6,)))
        opt.zero_grad()
        loss.backward()
        opt.step()
