"""Modules with lazily built parameters, per-size heads, re-initialisation and per-task decoders."""
import torch
import torch.nn as nn


class LazyScale(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = None

    def forward(self, x):
        if self.weight is None:
            self.weight = nn.Parameter(torch.ones(x.shape[-1]))
        return x * self.weight


class AdaptiveHead(nn.Module):
    def __init__(self, d=6):
        super().__init__()
        self.d = d
        self.body = nn.Linear(d, d)

    def forward(self, x, n_classes):
        name = f"head_{n_classes}"
        if not hasattr(self, name):
            setattr(self, name, nn.Linear(self.d, n_classes))
        return getattr(self, name)(self.body(x).relu())


class Resettable(nn.Module):
    def __init__(self, d=4):
        super().__init__()
        self.d = d
        self.lin = nn.Linear(d, d)
        self.calls = 0

    def maybe_reset(self, x):
        if x.shape[0] > 4:
            super().__init__()
            self.lin = nn.Linear(self.d, self.d)

    def forward(self, x):
        self.maybe_reset(x)
        return self.lin(x)


class MultiTask(nn.Module):
    def __init__(self, tasks=("seg", "depth", "normal"), d=6):
        super().__init__()
        for t in tasks:
            setattr(self, f"dec_{t}", nn.Linear(d, 2))
        self.tasks = tasks

    def forward(self, x, task):
        return getattr(self, "dec_" + task)(x)


def main():
    torch.manual_seed(0)
    lz = LazyScale()
    lz.compile(backend="eager")
    lz(torch.randn(2, 5))
    lz(torch.randn(2, 5))

    ah = AdaptiveHead()
    ah.compile(backend="eager")
    ah(torch.randn(2, 6), 3)
    ah(torch.randn(2, 6), 5)

    rs = Resettable()
    rs.compile(backend="eager")
    rs(torch.randn(2, 4))
    rs(torch.randn(6, 4))

    mt = MultiTask()
    mt.compile(backend="eager")
    for task in ("seg", "depth", "normal"):
        mt(torch.randn(2, 6), task)
