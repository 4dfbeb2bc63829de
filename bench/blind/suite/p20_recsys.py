"""Recommendation model: sparse features through EmbeddingBags keyed by feature name, dense tower, interactions."""
import torch
import torch.nn as nn


class SparseArch(nn.Module):
    def __init__(self, tables, dim):
        super().__init__()
        self.bags = nn.ModuleDict({name: nn.EmbeddingBag(n, dim, mode="sum") for name, n in tables.items()})
        self.buckets = {name: n for name, n in tables.items()}

    def forward(self, features):
        out = []
        for name, (values, offsets) in features.items():
            ids = values % self.buckets[name]
            out.append(self.bags[name](ids, offsets))
        return out


class DLRM(nn.Module):
    def __init__(self, tables, dim=8, dense_in=5):
        super().__init__()
        self.sparse = SparseArch(tables, dim)
        self.dense = nn.Sequential(nn.Linear(dense_in, dim), nn.ReLU())
        self.top = nn.Linear(dim + len(tables) * (len(tables) + 1) // 2, 1)

    def forward(self, dense, features):
        d = self.dense(dense)
        embs = [d] + self.sparse(features)
        z = torch.stack(embs, dim=1)
        inter = torch.bmm(z, z.transpose(1, 2))
        n = z.shape[1]
        iu = torch.triu_indices(n, n, offset=1)
        flat = inter[:, iu[0], iu[1]]
        if flat.shape[1] < self.top.in_features - d.shape[1]:
            flat = nn.functional.pad(flat, (0, self.top.in_features - d.shape[1] - flat.shape[1]))
        return self.top(torch.cat([d, flat], dim=1)).squeeze(-1)


def bag(batch, max_len, vocab):
    lengths = torch.randint(1, max_len, (batch,))
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)[:-1]])
    return torch.randint(0, vocab * 3, (int(lengths.sum()),)), offsets


def dedupe_ids(values):
    uniq, inverse = torch.unique(values, return_inverse=True)
    return uniq, inverse


def main():
    torch.manual_seed(0)
    tables = {"user": 50, "item": 80, "cat": 10}
    model = DLRM(tables)
    model.compile(backend="eager")
    feats = {k: bag(4, 5, n) for k, n in tables.items()}
    model(torch.randn(4, 5), feats)
    feats2 = {k: bag(4, 5, n) for k, n in tables.items() if k != "cat"}
    model(torch.randn(4, 5), feats2)

    dd = torch.compile(dedupe_ids, backend="eager")
    dd(torch.randint(0, 20, (15,)))
    dd(torch.randint(0, 20, (15,)))
