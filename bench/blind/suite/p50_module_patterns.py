"""Module-level patterns from compiler test suites: containers, computed lookups, closures, partials, super()."""
import functools

import torch
import torch.nn as nn


class Base(nn.Module):
    def __init__(self, d=4):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        return self.lin(x)


class Scaled(Base):
    def __init__(self, d=4, scale=2.0):
        super().__init__(d)
        self.scale = scale

    def forward(self, x):
        return super().forward(x) * self.scale


class Gated(Scaled):
    def forward(self, x):
        return torch.sigmoid(super().forward(x)) * x


class TaskRouter(nn.Module):
    def __init__(self, d=4, n=3):
        super().__init__()
        self.heads = nn.ModuleList([nn.Linear(d, d) for _ in range(n)])
        self.named = nn.ModuleDict({"cls": nn.Linear(d, 2), "reg": nn.Linear(d, 1)})

    def forward(self, x, task_id, kind):
        h = self.heads[int(task_id)](x)
        return self.named[kind](h)


class Truncated(nn.Module):
    def __init__(self, d=4, depth=4):
        super().__init__()
        self.layers = nn.Sequential(*[nn.Linear(d, d) for _ in range(depth)])

    def forward(self, x, upto):
        return self.layers[:upto](x)


def make_activation(kind, slope):
    if kind == "leaky":
        return lambda t: torch.where(t > 0, t, slope * t)
    return functools.partial(torch.clamp, min=0.0, max=slope)


def apply_act(x, act):
    return act(x)


def main():
    torch.manual_seed(0)
    g = Gated()
    g.compile(backend="eager")
    g(torch.randn(2, 4))
    g(torch.randn(2, 4))

    tr = TaskRouter()
    tr.compile(backend="eager")
    tr(torch.randn(2, 4), torch.tensor(0), "cls")
    tr(torch.randn(2, 4), torch.tensor(2), "reg")

    tu = Truncated()
    tu.compile(backend="eager")
    tu(torch.randn(2, 4), 2)
    tu(torch.randn(2, 4), 3)

    aa = torch.compile(apply_act, backend="eager")
    aa(torch.randn(3), make_activation("leaky", 0.1))
    aa(torch.randn(3), make_activation("leaky", 0.2))
    aa(torch.randn(3), make_activation("clip", 6.0))
