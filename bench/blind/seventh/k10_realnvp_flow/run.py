import torch

from . import config
from .flow import RealNVP


def two_moons(n, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.rand(n, generator=g) * torch.pi
    upper = torch.rand(n, generator=g) < 0.5
    x = torch.where(upper, torch.cos(t), 1 - torch.cos(t))
    y = torch.where(upper, torch.sin(t), 0.5 - torch.sin(t))
    pts = torch.stack([x, y], dim=1)
    return torch.cat([pts, 0.1 * torch.randn(n, 2, generator=g)], dim=1)


def main():
    torch.manual_seed(0)
    flow = RealNVP()
    log_prob = torch.compile(flow.log_prob)
    sample = torch.compile(flow.sample)
    opt = torch.optim.Adam(flow.parameters(), lr=1e-3)
    for step in range(3):
        x = two_moons(64, step)
        loss = -log_prob(x).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        for temp in (1.0, 0.8, 0.5):
            config.SAMPLE_TEMPERATURE = temp
            print(temp, sample(16).std().item())
