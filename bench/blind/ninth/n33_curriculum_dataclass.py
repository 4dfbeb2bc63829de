"""Denoising diffusion-style training on 2-D points with a dataclass curriculum config updated per epoch."""
import math
import random
from dataclasses import dataclass, replace

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class NoiseCurriculum:
    sigma_max: float = 0.5
    num_levels: int = 2
    use_clip: bool = False
    clip_value: float = 3.0


class ScoreNet(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(),
                                 nn.Linear(hidden, 2))

    def forward(self, x, sigma):
        return self.net(torch.cat([x, sigma.log()], dim=-1)) / sigma


@torch.compile
def dsm_loss(model, x, cfg: NoiseCurriculum):
    sigmas = torch.exp(torch.linspace(math.log(0.01), math.log(cfg.sigma_max), cfg.num_levels))
    level = torch.randint(0, cfg.num_levels, (x.shape[0], 1))
    sigma = sigmas[level]
    noise = torch.randn_like(x) * sigma
    target = -noise / sigma ** 2
    score = model(x + noise, sigma)
    if cfg.use_clip:
        score = score.clamp(-cfg.clip_value / sigma, cfg.clip_value / sigma)
    return 0.5 * ((score - target) ** 2 * sigma ** 2).sum(-1).mean()


def two_moons(n, rng):
    t = rng.uniform(0, np.pi, n)
    a = np.stack([np.cos(t), np.sin(t)], 1)
    b = np.stack([1 - np.cos(t), 0.5 - np.sin(t)], 1)
    pts = np.where(rng.rand(n, 1) < 0.5, a, b) + 0.05 * rng.randn(n, 2)
    return torch.from_numpy(pts.astype(np.float32))


def main():
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    rng = np.random.RandomState(0)
    model = ScoreNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    cfg = NoiseCurriculum()
    for epoch in range(5):
        cfg = replace(cfg, sigma_max=0.5 + 0.5 * epoch, num_levels=2 + 2 * epoch, use_clip=epoch >= 3)
        for step in range(2):
            loss = dsm_loss(model, two_moons(64, rng), cfg)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return loss.item()


if __name__ == "__main__":
    print(main())
