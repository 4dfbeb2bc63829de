"""Gradual magnitude pruning (Zhu & Gupta cubic schedule) with per-layer masks re-applied after each optimizer step."""
import torch
import torch.nn as nn


def cubic_sparsity(step, final_sparsity, begin, end, initial=0.0):
    if step < begin:
        return initial
    t = min(1.0, (step - begin) / (end - begin))
    return final_sparsity + (initial - final_sparsity) * (1 - t) ** 3


class MagnitudePruner:
    def __init__(self, model, final_sparsity=0.8, begin=1, end=4):
        self.params = {n: m.weight for n, m in model.named_modules() if isinstance(m, (nn.Linear, nn.Conv2d))}
        self.masks = {n: torch.ones_like(w, dtype=torch.bool) for n, w in self.params.items()}
        self.final_sparsity = final_sparsity
        self.begin, self.end = begin, end

    @torch.no_grad()
    def update_masks(self, step):
        sparsity = cubic_sparsity(step, self.final_sparsity, self.begin, self.end)
        for name, w in self.params.items():
            k = int(sparsity * w.numel())
            if k == 0:
                continue
            threshold = w.abs().flatten().kthvalue(k).values
            self.masks[name] = w.abs() > threshold
        return sparsity

    @torch.no_grad()
    def apply(self):
        for name, w in self.params.items():
            w.mul_(self.masks[name])


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))
    pruner = MagnitudePruner(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    update_masks = torch.compile(pruner.update_masks, backend="eager")
    apply_masks = torch.compile(pruner.apply, backend="eager")
    for step in range(5):
        x, y = torch.randn(8, 16), torch.randn(8, 8)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        update_masks(step)
        apply_masks()
