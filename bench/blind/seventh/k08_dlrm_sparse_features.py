"""DLRM-style recommender; some batches are missing optional sparse features."""
import torch
import torch.nn as nn


class SparseArch(nn.Module):
    def __init__(self, tables, dim):
        super().__init__()
        self.tables = nn.ModuleDict({name: nn.EmbeddingBag(size, dim, mode="sum") for name, size in tables.items()})
        self.dim = dim

    def forward(self, sparse):
        pooled = []
        for name, (ids, offsets) in sparse.items():
            pooled.append(self.tables[name](ids, offsets))
        return pooled


class DLRM(nn.Module):
    def __init__(self, dense_dim, tables, dim=8):
        super().__init__()
        self.bottom = nn.Sequential(nn.Linear(dense_dim, 16), nn.ReLU(), nn.Linear(16, dim))
        self.sparse = SparseArch(tables, dim)
        n = len(tables) + 1
        self.top = nn.Sequential(nn.Linear(dim + n * (n - 1) // 2, 16), nn.ReLU(), nn.Linear(16, 1))
        self.n_tables = len(tables)

    def interact(self, dense, pooled):
        feats = torch.stack([dense] + pooled, dim=1)
        inter = feats @ feats.transpose(1, 2)
        n = self.n_tables + 1
        iu = torch.triu_indices(n, n, offset=1)
        flat = inter[:, iu[0], iu[1]]
        return torch.cat([dense, flat], dim=1)

    def forward(self, dense, sparse):
        d = self.bottom(dense)
        pooled = self.sparse(sparse)
        # features absent from this batch contribute zeros
        while len(pooled) < self.n_tables:
            pooled.append(torch.zeros_like(d))
        return self.top(self.interact(d, pooled)).squeeze(-1)


TABLES = {"user_id": 50, "item_id": 80, "category": 10, "device": 4}


def make_batch(bs, features, seed):
    g = torch.Generator().manual_seed(seed)
    sparse = {}
    for name in features:
        lengths = torch.randint(1, 4, (bs,), generator=g)
        ids = torch.randint(0, TABLES[name], (int(lengths.sum()),), generator=g)
        offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)[:-1]])
        sparse[name] = (ids, offsets)
    return torch.randn(bs, 6, generator=g), sparse, torch.randint(0, 2, (bs,), generator=g).float()


def main():
    torch.manual_seed(0)
    model = torch.compile(DLRM(6, TABLES))
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05)
    schedule = [list(TABLES), list(TABLES), ["user_id", "item_id", "category"], list(TABLES),
                ["user_id", "item_id"]]
    for step, feats in enumerate(schedule):
        dense, sparse, label = make_batch(8, feats, step)
        loss = nn.functional.binary_cross_entropy_with_logits(model(dense, sparse), label)
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
