"""DLRM-style CTR model: dense MLP + EmbeddingBag tables keyed by feature name."""
from __future__ import annotations

from typing import Dict, Tuple

import torch
import torch.nn as nn

SPARSE_FEATURES = {"user_id": 100, "item_id": 200, "category": 20, "city": 50}

KJT = Dict[str, Tuple[torch.Tensor, torch.Tensor]]   # name -> (values, offsets)


class CTRModel(nn.Module):
    def __init__(self, dense_dim: int = 8, emb_dim: int = 8) -> None:
        super().__init__()
        self.tables = nn.ModuleDict({
            name: nn.EmbeddingBag(card, emb_dim, mode="sum") for name, card in SPARSE_FEATURES.items()
        })
        self.bottom = nn.Sequential(nn.Linear(dense_dim, emb_dim), nn.ReLU())
        n_vec = 1 + len(SPARSE_FEATURES)
        self.top = nn.Sequential(nn.Linear(n_vec * (n_vec - 1) // 2 + emb_dim, 16), nn.ReLU(), nn.Linear(16, 1))
        self.emb_dim = emb_dim

    def forward(self, dense: torch.Tensor, sparse: KJT) -> torch.Tensor:
        b = dense.shape[0]
        vecs = [self.bottom(dense)]
        for name, table in self.tables.items():
            if name in sparse:
                values, offsets = sparse[name]
                vecs.append(table(values, offsets))
            else:
                vecs.append(dense.new_zeros(b, self.emb_dim))
        z = torch.stack(vecs, dim=1)
        inter = z @ z.transpose(1, 2)
        iu = torch.triu_indices(z.shape[1], z.shape[1], offset=1)
        flat = inter[:, iu[0], iu[1]]
        return self.top(torch.cat([vecs[0], flat], dim=1)).squeeze(-1)


def make_batch(batch: int, present) -> Tuple[torch.Tensor, KJT, torch.Tensor]:
    sparse: KJT = {}
    for name in present:
        lengths = torch.randint(1, 4, (batch,))
        values = torch.randint(0, SPARSE_FEATURES[name], (int(lengths.sum()),))
        offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)[:-1]])
        sparse[name] = (values, offsets)
    return torch.randn(batch, 8), sparse, torch.randint(0, 2, (batch,)).float()


def main() -> None:
    torch.manual_seed(0)
    model = CTRModel()
    model.compile()
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05)
    loss_fn = nn.BCEWithLogitsLoss()
    feature_sets = [
        ("user_id", "item_id", "category", "city"),
        ("user_id", "item_id", "category", "city"),
        ("user_id", "item_id", "category"),          # logged-out traffic: no city
        ("item_id", "category"),
    ]
    for step, present in enumerate(feature_sets):
        dense, sparse, label = make_batch(16, present)
        loss = loss_fn(model(dense, sparse), label)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, present, round(loss.item(), 4))


if __name__ == "__main__":
    main()
