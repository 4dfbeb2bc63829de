"""Domain-adversarial classifier with custom autograd Functions (gradient reversal, straight-through rounding)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GradientReversal(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return -ctx.alpha * grad_output, None


class StraightThroughRound(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class FakeQuant(nn.Module):
    def __init__(self, bits=8):
        super().__init__()
        self.levels = 2 ** (bits - 1) - 1
        self.scale = nn.Parameter(torch.tensor(0.05))

    def forward(self, x):
        q = StraightThroughRound.apply(x / self.scale).clamp(-self.levels, self.levels)
        return q * self.scale


class DANN(nn.Module):
    def __init__(self, in_dim=20, feat=32, n_classes=4, alpha=0.3):
        super().__init__()
        self.alpha = alpha
        self.features = nn.Sequential(nn.Linear(in_dim, feat), nn.ReLU(), FakeQuant(), nn.Linear(feat, feat), nn.ReLU())
        self.label_head = nn.Linear(feat, n_classes)
        self.domain_head = nn.Sequential(nn.Linear(feat, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x_src, x_tgt):
        f_src, f_tgt = self.features(x_src), self.features(x_tgt)
        class_logits = self.label_head(f_src)
        f_all = GradientReversal.apply(torch.cat([f_src, f_tgt]), self.alpha)
        domain_logits = self.domain_head(f_all).squeeze(-1)
        return class_logits, domain_logits


def dann_loss(class_logits, y_src, domain_logits, n_src):
    domain_labels = torch.cat([torch.ones(n_src), torch.zeros(domain_logits.shape[0] - n_src)])
    return F.cross_entropy(class_logits, y_src) + F.binary_cross_entropy_with_logits(domain_logits, domain_labels)


def main():
    torch.manual_seed(0)
    model = DANN()
    compiled = torch.compile(model)
    loss_fn = torch.compile(dann_loss)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for _ in range(3):
        xs, xt, ys = torch.randn(8, 20), torch.randn(8, 20), torch.randint(0, 4, (8,))
        cls, dom = compiled(xs, xt)
        loss = loss_fn(cls, ys, dom, 8)
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
