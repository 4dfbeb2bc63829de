"""DLRM-style CTR model: bottom MLP for dense features, EmbeddingBag per sparse feature (jagged ids + offsets), dot interaction."""
import torch
import torch.nn as nn


class DLRM(nn.Module):
    def __init__(self, dense_dim, table_sizes, emb_dim=8):
        super().__init__()
        self.bottom = nn.Sequential(nn.Linear(dense_dim, 16), nn.ReLU(), nn.Linear(16, emb_dim))
        self.tables = nn.ModuleDict({name: nn.EmbeddingBag(n, emb_dim, mode="sum") for name, n in table_sizes.items()})
        n_feat = len(table_sizes) + 1
        n_inter = n_feat * (n_feat - 1) // 2
        self.top = nn.Sequential(nn.Linear(emb_dim + n_inter, 16), nn.ReLU(), nn.Linear(16, 1))
        self.emb_dim = emb_dim

    def forward(self, dense, sparse):
        b = dense.shape[0]
        feats = [self.bottom(dense)]
        for name, table in self.tables.items():
            if name in sparse:
                ids, offsets = sparse[name]
                feats.append(table(ids, offsets))
            else:
                feats.append(torch.zeros(b, self.emb_dim))
        z = torch.stack(feats, dim=1)
        inter = torch.bmm(z, z.transpose(1, 2))
        li, lj = torch.tril_indices(z.shape[1], z.shape[1], offset=-1)
        flat = inter[:, li, lj]
        return self.top(torch.cat([feats[0], flat], dim=1)).squeeze(1)


def jagged(batch, vocab, max_len, gen):
    lengths = torch.randint(1, max_len + 1, (batch,), generator=gen)
    ids = torch.randint(0, vocab, (int(lengths.sum()),), generator=gen)
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)[:-1]])
    return ids, offsets


def main():
    gen = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    sizes = {"user_id": 50, "item_id": 80, "category": 10}
    model = DLRM(4, sizes)
    model.compile(backend="eager")
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05)
    batches = [
        {k: jagged(6, n, 3, gen) for k, n in sizes.items()},
        {k: jagged(6, n, 3, gen) for k, n in sizes.items()},
        {k: jagged(6, n, 3, gen) for k, n in sizes.items() if k != "category"},
    ]
    for sparse in batches:
        dense = torch.randn(6, 4)
        label = torch.randint(0, 2, (6,)).float()
        loss = nn.functional.binary_cross_entropy_with_logits(model(dense, sparse), label)
        opt.zero_grad()
        loss.backward()
        opt.step()
