"""Iterative magnitude pruning: masks are added layer by layer and re-applied after each step."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MagnitudePruner:
    def __init__(self, model, schedule):
        self.model = model
        self.schedule = schedule  # {step: (layer_name, sparsity)}
        self.masks = {}
        self.apply = torch.compile(self._apply_masks)

    def maybe_prune(self, step):
        if step not in self.schedule:
            return
        name, sparsity = self.schedule[step]
        w = dict(self.model.named_parameters())[name].detach()
        k = int(sparsity * w.numel())
        threshold = w.abs().flatten().kthvalue(k).values
        self.masks[name] = (w.abs() > threshold).float()

    def _apply_masks(self, params, masks):
        total, zeros = 0, 0
        with torch.no_grad():
            for name, mask in masks.items():
                params[name].mul_(mask)
                zeros = zeros + (mask == 0).sum()
                total = total + mask.numel()
        return zeros / max(total, 1)


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    pruner = MagnitudePruner(model, {1: ("0.weight", 0.3), 3: ("2.weight", 0.5), 4: ("0.weight", 0.6)})
    for step in range(6):
        x = torch.randn(16, 12)
        loss = F.cross_entropy(model(x), (x[:, 0] > 0).long())
        opt.zero_grad()
        loss.backward()
        opt.step()
        pruner.maybe_prune(step)
        sparsity = pruner.apply(dict(model.named_parameters()), pruner.masks)


if __name__ == "__main__":
    main()
