"""Two-tower retrieval model trained with in-batch negatives; batch dimension declared dynamic up front."""
from __future__ import annotations

from typing import Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


class Tower(nn.Module):
    def __init__(self, n_ids: int, n_dense: int, dim: int = 16) -> None:
        super().__init__()
        self.id_emb = nn.Embedding(n_ids, dim)
        self.dense = nn.Linear(n_dense, dim)
        self.mlp = nn.Sequential(nn.ReLU(), nn.Linear(dim, dim))

    def forward(self, ids: torch.Tensor, dense: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.mlp(self.id_emb(ids) + self.dense(dense)), dim=-1)


class TwoTower(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.query = Tower(500, 4)
        self.item = Tower(1000, 6)
        self.log_temp = nn.Parameter(torch.tensor(2.0))

    def forward(self, q_ids, q_dense, i_ids, i_dense) -> torch.Tensor:
        q = self.query(q_ids, q_dense)
        it = self.item(i_ids, i_dense)
        logits = q @ it.T * self.log_temp.exp()
        labels = torch.arange(q.shape[0], device=q.device)
        return F.cross_entropy(logits, labels)


def make_batch(n: int) -> Tuple[torch.Tensor, ...]:
    batch = (torch.randint(0, 500, (n,)), torch.randn(n, 4), torch.randint(0, 1000, (n,)), torch.randn(n, 6))
    for t in batch:
        torch._dynamo.mark_dynamic(t, 0)
    return batch


def main() -> None:
    torch.manual_seed(0)
    model = TwoTower()
    cmodel = torch.compile(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step, n in enumerate([32, 24, 32, 17, 40]):
        loss = cmodel(*make_batch(n))
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, n, round(loss.item(), 4))


if __name__ == "__main__":
    main()
