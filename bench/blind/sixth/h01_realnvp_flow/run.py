import math

import torch

from .model import RealNVP


def two_moons(n, noise=0.05, gen=None):
    t = torch.rand(n, generator=gen) * math.pi
    upper = torch.rand(n, generator=gen) < 0.5
    x = torch.where(upper, torch.cos(t), 1 - torch.cos(t))
    y = torch.where(upper, torch.sin(t), 0.5 - torch.sin(t))
    pts = torch.stack([x, y], dim=1)
    return pts + noise * torch.randn(pts.shape, generator=gen)


class FlowTrainer:
    def __init__(self, flow, lr=1e-3):
        self.flow = flow
        self.opt = torch.optim.Adam(flow.parameters(), lr=lr)
        self.history = []

    @torch.compile
    def nll(self, x):
        lp = self.flow.log_prob(x)
        loss = -lp.mean()
        if torch.isnan(loss).item():
            raise FloatingPointError("NaN in flow likelihood")
        return loss

    def fit(self, data_fn, steps, batch_size):
        for step in range(steps):
            x = data_fn(batch_size)
            loss = self.nll(x)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            self.history.append(loss.detach())
        return torch.stack(self.history).mean()


def main():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    flow = RealNVP(dim=2, hidden=16, n_layers=4)
    trainer = FlowTrainer(flow)
    trainer.fit(lambda n: two_moons(n, gen=gen), steps=4, batch_size=64)

    sampler = torch.compile(flow.sample)
    with torch.no_grad():
        for temp in (1.0, 0.8, 0.6):
            xs = sampler(128, temperature=temp)
            assert xs.shape == (128, 2)
        # density on a grid for plotting
        grid = torch.stack(torch.meshgrid(torch.linspace(-2, 3, 20), torch.linspace(-1, 1.5, 20), indexing="ij"), -1)
        dens = torch.compile(flow)(grid.reshape(-1, 2))[1]
    return dens
