from typing import Dict, List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

FEATURE_CONFIG = {
    "user_id": {"vocab": 64, "dim": 16, "tower": "query"},
    "user_country": {"vocab": 8, "dim": 4, "tower": "query"},
    "item_id": {"vocab": 128, "dim": 16, "tower": "candidate"},
    "item_category": {"vocab": 12, "dim": 4, "tower": "candidate"},
}

USE_HASHING = False
NUM_HASH_BUCKETS = 32


def configure(use_hashing: bool):
    global USE_HASHING
    USE_HASHING = use_hashing


def hash_bucket(ids: torch.Tensor, num_buckets: int) -> torch.Tensor:
    return torch.remainder(ids * 2654435761, num_buckets)


class FeatureEmbedder(nn.Module):
    def __init__(self, tower: str):
        super().__init__()
        self.names = [n for n, cfg in FEATURE_CONFIG.items() if cfg["tower"] == tower]
        self.tables = nn.ModuleDict({n: nn.Embedding(FEATURE_CONFIG[n]["vocab"], FEATURE_CONFIG[n]["dim"]) for n in self.names})
        self.out_dim = sum(FEATURE_CONFIG[n]["dim"] for n in self.names)

    def forward(self, features: Dict[str, torch.Tensor]) -> torch.Tensor:
        embs = []
        for name in self.names:
            ids = features[name]
            if USE_HASHING:
                ids = hash_bucket(ids, min(NUM_HASH_BUCKETS, FEATURE_CONFIG[name]["vocab"]))
            embs.append(self.tables[name](ids))
        return torch.cat(embs, dim=-1)


class Tower(nn.Module):
    def __init__(self, tower: str, hidden: int = 32, out_dim: int = 16):
        super().__init__()
        self.embedder = FeatureEmbedder(tower)
        self.mlp = nn.Sequential(nn.Linear(self.embedder.out_dim, hidden), nn.ReLU(), nn.Linear(hidden, out_dim))

    def forward(self, features):
        return F.normalize(self.mlp(self.embedder(features)), dim=-1)


class TwoTowerModel(nn.Module):
    def __init__(self, temperature: float = 0.05):
        super().__init__()
        self.query_tower = Tower("query")
        self.candidate_tower = Tower("candidate")
        self.temperature = temperature
        self.item_counts: Dict[int, int] = {}
        self.total_count = 0

    def set_temperature(self, temperature: float):
        self.temperature = temperature

    def observe(self, item_ids: torch.Tensor):
        for i in item_ids.tolist():
            self.item_counts[i] = self.item_counts.get(i, 0) + 1
            self.total_count += 1

    def log_q(self, item_ids: torch.Tensor) -> torch.Tensor:
        counts = torch.tensor([self.item_counts.get(i, 1) for i in item_ids.tolist()], dtype=torch.float32)
        return torch.log(counts / max(self.total_count, 1))

    def forward(self, query_features, candidate_features):
        q = self.query_tower(query_features)
        c = self.candidate_tower(candidate_features)
        logits = q @ c.t() / self.temperature
        logits = logits - self.log_q(candidate_features["item_id"])[None, :]
        labels = torch.arange(q.shape[0], device=q.device)
        return F.cross_entropy(logits, labels)


def make_batch(n):
    query = {"user_id": torch.randint(0, 64, (n,)), "user_country": torch.randint(0, 8, (n,))}
    cand = {"item_id": torch.randint(0, 128, (n,)), "item_category": torch.randint(0, 12, (n,))}
    return query, cand


def main():
    torch.manual_seed(0)
    model = TwoTowerModel()
    model.forward = torch.compile(model.forward)
    optimizer = torch.optim.Adagrad(model.parameters(), lr=0.05)
    for step, temperature in enumerate((0.05, 0.05, 0.1)):
        if step == 2:
            configure(use_hashing=True)
        model.set_temperature(temperature)
        query, cand = make_batch(16)
        model.observe(cand["item_id"])
        loss = model(query, cand)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
