import torch
import torch.nn as nn

from . import config


class AffineCoupling(nn.Module):
    def __init__(self, dim, hidden, parity):
        super().__init__()
        mask = (torch.arange(dim) % 2 == parity).float()
        self.register_buffer("mask", mask)
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.Tanh(), nn.Linear(hidden, 2 * dim))

    def forward(self, x, reverse=False):
        x_masked = x * self.mask
        s, t = self.net(x_masked).chunk(2, dim=-1)
        s = torch.tanh(s / config.SCALE_CLAMP) * config.SCALE_CLAMP
        s = s * (1 - self.mask)
        t = t * (1 - self.mask)
        if not reverse:
            y = x_masked + (1 - self.mask) * (x * torch.exp(s) + t)
            return y, s.sum(-1)
        y = x_masked + (1 - self.mask) * ((x - t) * torch.exp(-s))
        return y, -s.sum(-1)


class RealNVP(nn.Module):
    def __init__(self, dim=4, hidden=32, n_layers=4):
        super().__init__()
        self.dim = dim
        self.layers = nn.ModuleList([AffineCoupling(dim, hidden, i % 2) for i in range(n_layers)])

    def forward(self, x, reverse=False):
        logdet = torch.zeros(x.shape[0])
        layers = reversed(self.layers) if reverse else self.layers
        for layer in layers:
            x, ld = layer(x, reverse=reverse)
            logdet = logdet + ld
        return x, logdet

    def log_prob(self, x):
        z, logdet = self(x)
        base = -0.5 * (z ** 2).sum(-1) - 0.5 * self.dim * torch.log(torch.tensor(2 * torch.pi))
        return base + logdet

    def sample(self, n):
        z = torch.randn(n, self.dim) * config.SAMPLE_TEMPERATURE
        x, _ = self(z, reverse=True)
        return x
