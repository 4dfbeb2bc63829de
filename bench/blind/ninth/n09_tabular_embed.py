"""Tabular classifier with entity embeddings for categorical columns + batch-normed continuous columns."""
import random
from dataclasses import dataclass, field
from typing import List

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class TabularConfig:
    cardinalities: List[int] = field(default_factory=lambda: [7, 12, 4, 30])
    n_continuous: int = 5
    hidden: List[int] = field(default_factory=lambda: [64, 32])
    dropout: float = 0.1
    n_classes: int = 2


def emb_size_rule(n_cat):
    """fastai's rule of thumb for embedding sizes."""
    return min(600, round(1.6 * n_cat ** 0.56))


class TabularModel(nn.Module):
    def __init__(self, cfg: TabularConfig):
        super().__init__()
        self.cardinalities = list(cfg.cardinalities)
        self.embeds = nn.ModuleList([nn.Embedding(c, emb_size_rule(c)) for c in cfg.cardinalities])
        self.emb_drop = nn.Dropout(cfg.dropout)
        self.bn_cont = nn.BatchNorm1d(cfg.n_continuous)
        n_emb = sum(e.embedding_dim for e in self.embeds)
        layers, d_in = [], n_emb + cfg.n_continuous
        for h in cfg.hidden:
            layers += [nn.Linear(d_in, h), nn.ReLU(inplace=True), nn.BatchNorm1d(h), nn.Dropout(cfg.dropout)]
            d_in = h
        layers.append(nn.Linear(d_in, cfg.n_classes))
        self.layers = nn.Sequential(*layers)

    def _check_categories(self, x_cat):
        max_ids = x_cat.max(dim=0).values.tolist()
        for col, (m, card) in enumerate(zip(max_ids, self.cardinalities)):
            if m >= card:
                raise IndexError(f"categorical column {col} has id {m} >= cardinality {card}")

    def forward(self, x_cat, x_cont):
        if self.training:
            self._check_categories(x_cat)
        x = [emb(x_cat[:, i]) for i, emb in enumerate(self.embeds)]
        x = self.emb_drop(torch.cat(x, dim=1))
        assert not torch.isnan(x_cont).any(), "NaN in continuous features"
        x = torch.cat([x, self.bn_cont(x_cont)], dim=1)
        return self.layers(x)


def synth_table(n, cfg, rng):
    x_cat = np.stack([rng.randint(0, c, size=n) for c in cfg.cardinalities], axis=1)
    x_cont = rng.randn(n, cfg.n_continuous).astype(np.float32)
    y = ((x_cat[:, 0] % 2 == 0) ^ (x_cont[:, 0] > 0)).astype(np.int64)
    return torch.from_numpy(x_cat), torch.from_numpy(x_cont), torch.from_numpy(y)


def main():
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    rng = np.random.RandomState(0)
    cfg = TabularConfig()
    model = TabularModel(cfg)
    model.compile()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    x_cat, x_cont, y = synth_table(256, cfg, rng)
    for epoch in range(2):
        model.train()
        perm = torch.randperm(256)
        for i in range(0, 256, 64):
            idx = perm[i:i + 64]
            loss = F.cross_entropy(model(x_cat[idx], x_cont[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            acc = (model(x_cat, x_cont).argmax(1) == y).float().mean().item()
    return acc


if __name__ == "__main__":
    print(main())
