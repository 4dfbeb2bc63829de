import torch
import torch.nn as nn

from . import config
from .solver import odeint_adaptive


class Dynamics(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.lin1 = nn.Linear(dim, 32)
        self.lin2 = nn.Linear(32, dim)

    def forward(self, t, y):
        return self.lin2(torch.tanh(self.lin1(y))) - 0.1 * y


class ODEBlock(nn.Module):
    def __init__(self, dynamics, t1=1.0):
        super().__init__()
        self.dynamics = dynamics
        self.t1 = t1

    def forward(self, y0):
        y1, _ = odeint_adaptive(self.dynamics, y0, 0.0, self.t1)
        return y1


def main():
    torch.manual_seed(0)
    block = ODEBlock(Dynamics())
    head = nn.Linear(4, 3)
    solve = torch.compile(block)
    x = torch.randn(16, 4)
    labels = torch.randint(0, 3, (16,))
    outs = []
    for tol in (1e-3, 1e-3, 1e-4):
        config.SOLVER.rtol = tol
        z = solve(x)
        loss = nn.functional.cross_entropy(head(z), labels)
        loss.backward()
        outs.append(loss.detach())
    return torch.stack(outs)
