"""Sequence pooling and loss reduction selected by enums, as in a sentence-embedding trainer."""
from __future__ import annotations

from enum import Enum

import torch
import torch.nn as nn
import torch.nn.functional as F


class Pooling(Enum):
    MEAN = "mean"
    MAX = "max"
    CLS = "cls"
    LAST = "last"


class Reduction(str, Enum):
    MEAN = "mean"
    SUM = "sum"


class SentenceEncoder(nn.Module):
    def __init__(self, vocab: int = 100, dim: int = 32, pooling: Pooling = Pooling.MEAN) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.mix = nn.Conv1d(dim, dim, 3, padding=1)
        self.pooling = pooling

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(self.mix(self.emb(ids).transpose(1, 2))).transpose(1, 2)
        mask = (torch.arange(ids.shape[1])[None] < lengths[:, None]).float()
        if self.pooling is Pooling.MEAN:
            return (h * mask[..., None]).sum(1) / lengths[:, None]
        if self.pooling is Pooling.MAX:
            return h.masked_fill(mask[..., None] == 0, -1e4).amax(1)
        if self.pooling is Pooling.CLS:
            return h[:, 0]
        return h[torch.arange(h.shape[0]), lengths - 1]


@torch.compile
def contrastive_step(enc: SentenceEncoder, ids_a, len_a, ids_b, len_b, reduction: Reduction,
                     scale: float = 20.0) -> torch.Tensor:
    za = F.normalize(enc(ids_a, len_a), dim=-1)
    zb = F.normalize(enc(ids_b, len_b), dim=-1)
    logits = scale * za @ zb.T
    labels = torch.arange(za.shape[0])
    return F.cross_entropy(logits, labels, reduction=reduction.value)


def make_pairs(n: int, t: int):
    lengths = torch.randint(2, t + 1, (n,))
    ids = torch.randint(1, 100, (n, t)) * (torch.arange(t)[None] < lengths[:, None])
    return ids, lengths


def main() -> None:
    torch.manual_seed(0)
    enc = SentenceEncoder()
    opt = torch.optim.Adam(enc.parameters(), lr=1e-3)
    schedule = [(Pooling.MEAN, Reduction.MEAN), (Pooling.MEAN, Reduction.MEAN),
                (Pooling.MAX, Reduction.MEAN), (Pooling.LAST, Reduction.SUM)]
    for step, (pool, red) in enumerate(schedule):
        enc.pooling = pool
        ids_a, len_a = make_pairs(6, 10)
        ids_b, len_b = make_pairs(6, 10)
        loss = contrastive_step(enc, ids_a, len_a, ids_b, len_b, red)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, pool.name, red.value, round(loss.item(), 4))


if __name__ == "__main__":
    main()
