"""Churn model over dict inputs (per-feature embeddings, NaN imputation, batch-norm'd numerics)."""
import torch
import torch.nn as nn

from .config import TabularConfig


class MLPBlock(nn.Sequential):
    def __init__(self, cin, cout, dropout):
        super().__init__(nn.Linear(cin, cout), nn.BatchNorm1d(cout), nn.ReLU(), nn.Dropout(dropout))


class TabularModel(nn.Module):
    def __init__(self, cfg: TabularConfig):
        super().__init__()
        self.cfg = cfg
        self.embeddings = nn.ModuleDict({f.name: nn.Embedding(f.cardinality + 1, f.emb_dim) for f in cfg.categorical})
        self.num_norm = nn.BatchNorm1d(len(cfg.numerical))
        dims = [cfg.input_dim] + cfg.hidden
        self.mlp = nn.Sequential(*[MLPBlock(a, b, cfg.dropout) for a, b in zip(dims[:-1], dims[1:])])
        self.out = nn.Linear(dims[-1], 1 if cfg.output == "binary" else 3)

    def forward(self, batch: dict):
        cats = []
        for name, emb in self.embeddings.items():
            idx = batch[name].clamp(0, emb.num_embeddings - 1)
            cats.append(emb(idx))
        nums = torch.stack([batch[n] for n in self.cfg.numerical], dim=1)
        if torch.isnan(nums).any():
            nums = torch.nan_to_num(nums, nan=self.cfg.impute_value)
        h = torch.cat(cats + [self.num_norm(nums)], dim=1)
        logits = self.out(self.mlp(h)).squeeze(-1)
        if self.cfg.output == "binary":
            return torch.sigmoid(logits)
        return logits.softmax(-1)


def random_batch(cfg, n, with_nan=False, index_dtype=torch.long):
    b = {f.name: torch.randint(0, f.cardinality, (n,), dtype=index_dtype) for f in cfg.categorical}
    for name in cfg.numerical:
        b[name] = torch.randn(n)
    if with_nan:
        b["spend"][0] = float("nan")
    return b


def main():
    torch.manual_seed(0)
    cfg = TabularConfig()
    model = TabularModel(cfg).eval()
    predict = torch.compile(model)
    with torch.no_grad():
        p1 = predict(random_batch(cfg, 16))
        p2 = predict(random_batch(cfg, 16, with_nan=True))
        p3 = predict(random_batch(cfg, 16, index_dtype=torch.int32))
    return p1.mean().item(), p2.mean().item(), p3.mean().item()
