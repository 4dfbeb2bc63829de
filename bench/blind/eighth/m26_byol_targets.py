"""BYOL-style self-supervised training: online and momentum target branches share one projector fn."""
from __future__ import annotations

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, dim: int = 32) -> None:
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.ReLU(), nn.Conv2d(16, dim, 3, 2, 1), nn.ReLU())
        self.proj = nn.Sequential(nn.Linear(dim, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(self.conv(x).mean(dim=(2, 3)))


@torch.compile
def embed(encoder: Encoder, views: torch.Tensor) -> torch.Tensor:
    return F.normalize(encoder(views), dim=-1)


def augment(x: torch.Tensor) -> torch.Tensor:
    flip = torch.rand(x.shape[0], 1, 1, 1) < 0.5
    x = torch.where(flip, x.flip(-1), x)
    return x + 0.1 * torch.randn_like(x)


def gradient_penalty(encoder: Encoder, x: torch.Tensor) -> torch.Tensor:
    """Penalise the input-gradient norm of the embedding (computed even inside no_grad contexts)."""
    with torch.enable_grad():
        x = x.detach().requires_grad_(True)
        z = embed(encoder, x)
        (g,) = torch.autograd.grad(z.pow(2).sum(), x, create_graph=True)
    return g.pow(2).mean()


@torch.no_grad()
def momentum_update(online: nn.Module, target: nn.Module, tau: float) -> None:
    for po, pt in zip(online.parameters(), target.parameters()):
        pt.lerp_(po, 1 - tau)


def main() -> None:
    torch.manual_seed(0)
    online = Encoder()
    predictor = nn.Linear(16, 16)
    target = copy.deepcopy(online)
    opt = torch.optim.Adam(list(online.parameters()) + list(predictor.parameters()), lr=1e-3)
    for step in range(4):
        x = torch.randn(8, 3, 16, 16)
        v1, v2 = augment(x), augment(x)
        p1 = F.normalize(predictor(embed(online, v1)), dim=-1)
        with torch.no_grad():
            t2 = embed(target, v2)
        loss = (2 - 2 * (p1 * t2).sum(-1)).mean()
        if step % 2 == 1:
            loss = loss + 0.01 * gradient_penalty(online, v1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        momentum_update(online, target, tau=0.99)
        print(step, round(loss.item(), 4))


if __name__ == "__main__":
    main()
