import torch
import torch.nn as nn

from .features import CARDINALITIES, SPARSE_FEATURES


def mlp(sizes, final_act=True):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if final_act or i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class DLRM(nn.Module):
    def __init__(self, dense_dim=6, emb_dim=8, interaction="dot"):
        super().__init__()
        self.interaction = interaction
        self.bottom = mlp([dense_dim, 16, emb_dim])
        self.tables = nn.ModuleDict({
            f: nn.EmbeddingBag(CARDINALITIES[f], emb_dim, mode="sum") for f in SPARSE_FEATURES
        })
        n = len(SPARSE_FEATURES) + 1
        self.register_buffer("li", torch.triu_indices(n, n, offset=1)[0], persistent=False)
        self.register_buffer("lj", torch.triu_indices(n, n, offset=1)[1], persistent=False)
        top_in = emb_dim + (n * (n - 1) // 2 if interaction == "dot" else n * emb_dim)
        self.top = mlp([top_in, 16, 1], final_act=False)
        self.stats = {"impressions": 0, "clicks": 0.0}

    def embed(self, sparse, opts):
        pooled = []
        for f in SPARSE_FEATURES:
            values, offsets = sparse[f]
            bag = self.tables[f](values % CARDINALITIES[f], offsets)
            if f in opts.get("drop_features", ()):
                bag = torch.zeros_like(bag)
            pooled.append(bag)
        return pooled

    def interact(self, x, pooled):
        feats = torch.stack([x] + pooled, dim=1)
        if self.interaction == "dot":
            z = torch.bmm(feats, feats.transpose(1, 2))
            return torch.cat([x, z[:, self.li, self.lj]], dim=1)
        return torch.cat([x, feats.flatten(1)], dim=1)

    def forward(self, dense, sparse, opts):
        x = self.bottom(dense)
        pooled = self.embed(sparse, opts)
        return self.top(self.interact(x, pooled)).squeeze(-1)

    def loss(self, dense, sparse, labels, opts):
        logits = self(dense, sparse, opts)
        self.stats["impressions"] += labels.numel()
        self.stats["clicks"] += labels.sum().item()
        return nn.functional.binary_cross_entropy_with_logits(logits, labels)
