"""Tabular model: a per-column encoder driven by a feature spec, with imputation and category lookups."""
import torch
import torch.nn as nn

SPEC = [("age", "num"), ("income", "num"), ("city", "cat"), ("device", "cat")]


class TabEncoder(nn.Module):
    def __init__(self, vocab_sizes, means, dim=4):
        super().__init__()
        self.means = means
        self.embs = nn.ModuleDict({k: nn.Embedding(v, dim) for k, v in vocab_sizes.items()})
        self.num_proj = nn.Linear(1, dim)
        n_num = sum(1 for _, kind in SPEC if kind == "num")
        self.head = nn.Linear(dim * len(SPEC), 1)
        self.n_num = n_num

    def forward(self, batch, mode):
        cols = []
        for name, kind in SPEC:
            col = batch[name]
            if kind == "num":
                col = torch.nan_to_num(col, nan=self.means[name])
                cols.append(self.num_proj(col.unsqueeze(-1)))
            else:
                cols.append(self.embs[name](col))
        h = torch.cat(cols, dim=-1)
        out = self.head(h).squeeze(-1)
        if mode == "proba":
            return out.sigmoid()
        return out


class CategoryMapper:
    def __init__(self, vocab):
        self.vocab = vocab

    def __call__(self, raw_codes):
        ids = [self.vocab.get(c, 0) for c in raw_codes.tolist()]
        return torch.tensor(ids)


def standardize(batch):
    out = {}
    for k, v in batch.items():
        if v.is_floating_point():
            out[k] = (v - v.mean()) / (v.std() + 1e-6)
        else:
            out[k] = v
    return out


def make_batch(n):
    age = torch.rand(n) * 80
    age[0] = float("nan")
    return {"age": age, "income": torch.rand(n) * 1e5, "city": torch.randint(0, 5, (n,)),
            "device": torch.randint(0, 3, (n,))}


def main():
    torch.manual_seed(0)
    enc = TabEncoder({"city": 5, "device": 3}, {"age": 40.0, "income": 5e4})
    enc.compile(backend="eager")
    enc(make_batch(6), "logit")
    enc(make_batch(6), "proba")

    mapper = CategoryMapper({101: 1, 202: 2, 303: 3})
    m = torch.compile(mapper.__call__, backend="eager")
    m(torch.tensor([101, 202, 999]))
    m(torch.tensor([303, 101, 101]))

    st = torch.compile(standardize, backend="eager")
    st(make_batch(6))
    b = make_batch(6)
    b["extra"] = torch.rand(6)
    st(b)
