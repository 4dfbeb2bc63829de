"""Gradual magnitude pruning (Zhu & Gupta cubic schedule) with global thresholds."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class PrunableMLP(nn.Module):
    def __init__(self, sizes=(32, 64, 64, 10)):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
        self.masks = {}

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            w = layer.weight
            mask = self.masks.get(f"layers.{i}.weight")
            if mask is not None:
                w = w * mask
            x = F.linear(x, w, layer.bias)
            if i < len(self.layers) - 1:
                x = F.relu(x)
        return x


def cubic_sparsity(step, final_sparsity, begin, end):
    if step < begin:
        return 0.0
    t = min(1.0, (step - begin) / (end - begin))
    return final_sparsity * (1 - (1 - t) ** 3)


@torch.compile
def compute_masks(model, sparsity, exclude=("layers.2.weight",)):
    named = [(n, p) for n, p in model.named_parameters() if n.endswith("weight") and n not in exclude]
    scores = torch.cat([p.detach().abs().flatten() for _, p in named])
    k = int(sparsity * scores.numel())
    if k < 1:
        return {}
    threshold = torch.kthvalue(scores, k).values.item()
    return {n: (p.detach().abs() > threshold).float() for n, p in named}


def sparsity_report(model):
    total = zeros = 0
    for name, mask in model.masks.items():
        total += mask.numel()
        zeros += int((mask == 0).sum())
    return zeros / max(total, 1)


def main():
    torch.manual_seed(0)
    model = PrunableMLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    fwd = torch.compile(model)
    x = torch.randn(64, 32)
    y = torch.randint(0, 10, (64,))
    for step in range(8):
        if step % 2 == 0:
            s = cubic_sparsity(step, 0.8, begin=2, end=6)
            model.masks = compute_masks(model, s)
        loss = F.cross_entropy(fwd(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return sparsity_report(model)
