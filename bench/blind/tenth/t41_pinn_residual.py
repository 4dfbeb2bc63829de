"""Physics-informed network for the 1-D heat equation: PDE residual via autograd.grad inside the compiled loss."""
import math

import torch
import torch.nn as nn


class FourierFeatures(nn.Module):
    def __init__(self, in_dim=2, n_feats=16, scale=2.0):
        super().__init__()
        self.register_buffer("B", torch.randn(in_dim, n_feats) * scale)

    def forward(self, x):
        proj = 2 * math.pi * x @ self.B
        return torch.cat([proj.sin(), proj.cos()], dim=-1)


class PINN(nn.Module):
    def __init__(self, hidden=32, depth=3):
        super().__init__()
        self.embed = FourierFeatures()
        layers, last = [], 32
        for _ in range(depth):
            layers += [nn.Linear(last, hidden), nn.Tanh()]
            last = hidden
        self.net = nn.Sequential(*layers, nn.Linear(last, 1))

    def forward(self, x, t):
        return self.net(self.embed(torch.cat([x, t], dim=-1)))


def heat_residual(model, x, t, alpha):
    x = x.requires_grad_(True)
    t = t.requires_grad_(True)
    u = model(x, t)
    u_t, u_x = torch.autograd.grad(u.sum(), (t, x), create_graph=True)
    u_xx = torch.autograd.grad(u_x.sum(), x, create_graph=True)[0]
    return u_t - alpha * u_xx


def pinn_loss(model, colloc, boundary, initial, alpha=0.1):
    x_c, t_c = colloc
    res = heat_residual(model, x_c, t_c, alpha)
    x_b, t_b = boundary
    u_b = model(x_b, t_b)
    x_0, t_0 = initial
    u_0 = model(x_0, t_0)
    loss_pde = res.pow(2).mean()
    loss_bc = u_b.pow(2).mean()
    loss_ic = (u_0 - torch.sin(math.pi * x_0)).pow(2).mean()
    return loss_pde + loss_bc + 10.0 * loss_ic, (loss_pde.detach(), loss_bc.detach(), loss_ic.detach())


def sample_points(n_colloc=64, n_bc=16, n_ic=16):
    colloc = (torch.rand(n_colloc, 1), torch.rand(n_colloc, 1))
    x_b = torch.randint(0, 2, (n_bc, 1)).float()
    boundary = (x_b, torch.rand(n_bc, 1))
    initial = (torch.rand(n_ic, 1), torch.zeros(n_ic, 1))
    return colloc, boundary, initial


def main():
    torch.manual_seed(0)
    model = PINN()
    loss_fn = torch.compile(pinn_loss)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(3):
        loss, parts = loss_fn(model, *sample_points())
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
