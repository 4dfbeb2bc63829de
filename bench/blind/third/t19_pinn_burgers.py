"""Physics-informed network for the viscous Burgers equation: PDE residual via autograd, boundary/initial losses."""
import math

import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, width=20, depth=3):
        super().__init__()
        layers, d = [], 2
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.Tanh()]
            d = width
        layers.append(nn.Linear(d, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x, t):
        return self.net(torch.cat([x, t], dim=1))


def burgers_residual(model, x, t, nu):
    x = x.clone().requires_grad_(True)
    t = t.clone().requires_grad_(True)
    u = model(x, t)
    u_t, u_x = torch.autograd.grad(u.sum(), (t, x), create_graph=True)
    u_xx = torch.autograd.grad(u_x.sum(), x, create_graph=True)[0]
    return u_t + u * u_x - nu * u_xx


@torch.compile(backend="eager")
def pinn_loss(model, colloc, ic, bc, nu, w_ic=10.0):
    r = burgers_residual(model, colloc[:, :1], colloc[:, 1:], nu)
    loss_pde = r.pow(2).mean()
    u0 = model(ic[:, :1], torch.zeros_like(ic[:, :1]))
    loss_ic = (u0 + torch.sin(math.pi * ic[:, :1])).pow(2).mean()
    ub = model(bc[:, :1], bc[:, 1:])
    loss_bc = ub.pow(2).mean()
    return loss_pde + w_ic * loss_ic + loss_bc


def sample_points(n_colloc, n_ic, n_bc):
    colloc = torch.rand(n_colloc, 2) * torch.tensor([2.0, 1.0]) - torch.tensor([1.0, 0.0])
    ic = torch.rand(n_ic, 1) * 2 - 1
    bc_t = torch.rand(n_bc, 1)
    bc_x = torch.where(torch.rand(n_bc, 1) < 0.5, -1.0, 1.0)
    return colloc, ic, torch.cat([bc_x, bc_t], dim=1)


def main():
    torch.manual_seed(0)
    model = MLP()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    nu = 0.01 / math.pi
    for it in range(3):
        colloc, ic, bc = sample_points(64, 16, 16)
        loss = pinn_loss(model, colloc, ic, bc, nu)
        opt.zero_grad()
        loss.backward()
        opt.step()
