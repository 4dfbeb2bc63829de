"""RealNVP-style affine coupling flow for 2-D toy densities."""
import math

import torch
import torch.nn as nn


class CouplingNet(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(dim, hidden), nn.SiLU(),
            nn.Linear(hidden, hidden), nn.SiLU(),
            nn.Linear(hidden, 2 * dim),
        )
        nn.init.zeros_(self.net[-1].weight)
        nn.init.zeros_(self.net[-1].bias)

    def forward(self, x):
        s, t = self.net(x).chunk(2, dim=-1)
        return torch.tanh(s), t


class AffineCoupling(nn.Module):
    def __init__(self, dim, hidden, parity):
        super().__init__()
        mask = (torch.arange(dim) % 2 == parity).float()
        self.register_buffer("mask", mask)
        self.st = CouplingNet(dim, hidden)

    def forward(self, x, reverse=False):
        x_masked = x * self.mask
        s, t = self.st(x_masked)
        s = s * (1 - self.mask)
        t = t * (1 - self.mask)
        if not reverse:
            y = x_masked + (1 - self.mask) * (x * torch.exp(s) + t)
            return y, s.sum(dim=-1)
        y = x_masked + (1 - self.mask) * ((x - t) * torch.exp(-s))
        return y, -s.sum(dim=-1)


class RealNVP(nn.Module):
    def __init__(self, dim=2, hidden=32, n_layers=4):
        super().__init__()
        self.dim = dim
        self.layers = nn.ModuleList(AffineCoupling(dim, hidden, i % 2) for i in range(n_layers))
        self.register_buffer("base_loc", torch.zeros(dim))

    def forward(self, x, reverse=False):
        logdet = x.new_zeros(x.shape[0])
        layers = reversed(self.layers) if reverse else self.layers
        for layer in layers:
            x, ld = layer(x, reverse=reverse)
            logdet = logdet + ld
        return x, logdet

    def base_log_prob(self, z):
        return -0.5 * (z ** 2).sum(-1) - 0.5 * self.dim * math.log(2 * math.pi)

    def log_prob(self, x):
        z, logdet = self(x)
        return self.base_log_prob(z) + logdet

    def sample(self, n, temperature=1.0):
        z = torch.randn(n, self.dim, device=self.base_loc.device) * temperature
        x, _ = self(z, reverse=True)
        return x
