"""Metric learning with a margin curriculum; the loss is chosen and parameterised via functools.partial."""
from __future__ import annotations

import functools
from typing import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F


def triplet_loss(anchor, positive, negative, margin: float = 0.2, p: int = 2) -> torch.Tensor:
    d_ap = (anchor - positive).norm(p=p, dim=-1)
    d_an = (anchor - negative).norm(p=p, dim=-1)
    return F.relu(d_ap - d_an + margin).mean()


def cosine_triplet_loss(anchor, positive, negative, margin: float = 0.1) -> torch.Tensor:
    s_ap = F.cosine_similarity(anchor, positive)
    s_an = F.cosine_similarity(anchor, negative)
    return F.relu(s_an - s_ap + margin).mean()


def make_normalizer(temperature: float) -> Callable[[torch.Tensor], torch.Tensor]:
    def normalize(z: torch.Tensor) -> torch.Tensor:
        return F.normalize(z, dim=-1) / temperature
    return normalize


class Embedder(nn.Module):
    def __init__(self, d_in: int = 24, d_out: int = 16) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, 48), nn.ReLU(), nn.Linear(48, d_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


@torch.compile
def embed_and_score(model: Embedder, batch: torch.Tensor, loss_fn: Callable, post: Callable) -> torch.Tensor:
    z = post(model(batch.flatten(0, 1))).view(3, batch.shape[1], -1)
    return loss_fn(z[0], z[1], z[2])


def curriculum(epoch: int):
    if epoch < 2:
        return functools.partial(triplet_loss, margin=0.2 + 0.1 * epoch), make_normalizer(1.0)
    return functools.partial(cosine_triplet_loss, margin=0.1), make_normalizer(0.5)


def main() -> None:
    torch.manual_seed(0)
    model = Embedder()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(4):
        loss_fn, post = curriculum(epoch)
        for _ in range(2):
            batch = torch.randn(3, 8, 24)
            loss = embed_and_score(model, batch, loss_fn, post)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss_fn.func.__name__, loss_fn.keywords, round(loss.item(), 4))


if __name__ == "__main__":
    main()
