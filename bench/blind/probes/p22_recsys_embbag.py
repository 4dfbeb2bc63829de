"""DLRM-style ranking model: hashed sparse ids -> EmbeddingBag with offsets, dense MLP, dot interaction."""
import zlib

import torch
import torch.nn as nn


def hash_bucket(ids, num_buckets, seed=17):
    # multiplicative hashing, stays on tensors
    return ((ids * 2654435761 + seed) % 4294967296) % num_buckets


def lengths_to_offsets(lengths):
    return torch.tensor([0] + lengths.cumsum(0)[:-1].tolist(), dtype=torch.long)


class SparseArch(nn.Module):
    def __init__(self, features, num_buckets, dim):
        super().__init__()
        self.features = features
        self.num_buckets = num_buckets
        self.bags = nn.ModuleDict({f: nn.EmbeddingBag(num_buckets, dim, mode="sum") for f in features})

    def forward(self, kjt):
        out = []
        for f in self.features:
            values, lengths = kjt[f]
            offsets = lengths_to_offsets(lengths)
            out.append(self.bags[f](hash_bucket(values, self.num_buckets), offsets))
        return torch.stack(out, 1)


class DLRM(nn.Module):
    def __init__(self, dense_in=4, features=("item", "cat", "query"), num_buckets=97, dim=8):
        super().__init__()
        self.dense = nn.Sequential(nn.Linear(dense_in, 16), nn.ReLU(), nn.Linear(16, dim))
        self.sparse = SparseArch(list(features), num_buckets, dim)
        n = len(features) + 1
        self.tri = torch.triu_indices(n, n, offset=1)
        self.top = nn.Sequential(nn.Linear(dim + self.tri.shape[1], 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, dense, kjt):
        d = self.dense(dense)
        s = self.sparse(kjt)
        feats = torch.cat([d[:, None], s], 1)
        inter = feats @ feats.transpose(1, 2)
        flat = inter[:, self.tri[0], self.tri[1]]
        return self.top(torch.cat([d, flat], 1)).squeeze(-1)


def string_ids(strings):
    return torch.tensor([zlib.crc32(s.encode()) % 100000 for s in strings])


def random_kjt(batch, features):
    kjt = {}
    for f in features:
        lengths = torch.randint(1, 4, (batch,))
        values = torch.randint(0, 100000, (int(lengths.sum()),))
        kjt[f] = (values, lengths)
    return kjt


def main():
    torch.manual_seed(0)
    model = DLRM()
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05)
    step = torch.compile(model)
    for _ in range(3):
        kjt = random_kjt(6, ["item", "cat", "query"])
        y = (torch.rand(6) > 0.5).float()
        logits = step(torch.randn(6, 4), kjt)
        loss = nn.functional.binary_cross_entropy_with_logits(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item(), string_ids(["a", "b"]).shape


if __name__ == "__main__":
    print(main())
