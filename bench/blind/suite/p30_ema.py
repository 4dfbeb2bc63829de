"""Model EMA: a shadow copy updated after each optimizer step, and snapshots taken inside compiled code."""
import copy

import torch
import torch.nn as nn


class ModelEMA:
    def __init__(self, model, decay=0.999):
        self.shadow = copy.deepcopy(model).eval()
        self.decay = decay
        self.num_updates = 0

    @torch.no_grad()
    def update(self, model):
        self.num_updates += 1
        d = min(self.decay, (1 + self.num_updates) / (10 + self.num_updates))
        for s, p in zip(self.shadow.parameters(), model.parameters()):
            s.mul_(d).add_(p.detach(), alpha=1 - d)


def snapshot_and_eval(model, x):
    frozen = copy.deepcopy(model)
    frozen.eval()
    return frozen(x)


@torch.no_grad()
def lerp_weights(dst, src, t):
    for a, b in zip(dst.parameters(), src.parameters()):
        a.lerp_(b, t)
    return dst


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    ema = ModelEMA(model)
    upd = torch.compile(ema.update, backend="eager")
    for _ in range(3):
        upd(model)

    snap = torch.compile(snapshot_and_eval, backend="eager")
    snap(model, torch.randn(2, 4))
    snap(model, torch.randn(2, 4))

    other = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    lw = torch.compile(lerp_weights, backend="eager")
    lw(other, model, 0.5)
    lw(other, model, 0.5)
