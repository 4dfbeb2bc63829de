"""Two-tower retrieval model with in-batch negatives, hashed features and a fixed top-k scorer."""
import torch
import torch.nn as nn
import torch.nn.functional as F

NUM_BUCKETS = 97
TOP_K = 3


class Tower(nn.Module):
    def __init__(self, n_fields, d=8):
        super().__init__()
        self.emb = nn.Embedding(NUM_BUCKETS, d)
        self.mlp = nn.Sequential(nn.Linear(n_fields * d, 16), nn.ReLU(), nn.Linear(16, d))
        self.n_fields = n_fields

    def forward(self, ids):
        assert ids.shape[-1] == self.n_fields, "field count mismatch"
        h = self.emb(torch.remainder(ids * 31 + 7, NUM_BUCKETS))
        return F.normalize(self.mlp(h.flatten(1)), dim=-1)


class TwoTower(nn.Module):
    def __init__(self, temperature=0.05):
        super().__init__()
        self.user = Tower(3)
        self.item = Tower(2)
        self.temperature = temperature

    def forward(self, user_ids, item_ids, item_freq=None):
        u = self.user(user_ids)
        v = self.item(item_ids)
        logits = u @ v.t() / self.temperature
        if item_freq is not None:
            logits = logits - torch.log(item_freq.clamp(min=1e-6))[None, :]
        labels = torch.arange(u.shape[0])
        return F.cross_entropy(logits, labels)


def retrieve(user_vec, item_bank):
    scores = user_vec @ item_bank.t()
    k = min(TOP_K, item_bank.shape[0])
    vals, idx = scores.topk(k, dim=-1)
    return idx, torch.where(vals > 0, vals, torch.zeros_like(vals))


def main():
    torch.manual_seed(0)
    model = TwoTower()
    model.compile(backend="eager")
    model(torch.randint(0, 10000, (6, 3)), torch.randint(0, 10000, (6, 2)), torch.rand(6))
    model(torch.randint(0, 10000, (6, 3)), torch.randint(0, 10000, (6, 2)), torch.rand(6))
    r = torch.compile(retrieve, backend="eager")
    r(torch.randn(2, 8), torch.randn(20, 8))
    r(torch.randn(2, 8), torch.randn(20, 8))
