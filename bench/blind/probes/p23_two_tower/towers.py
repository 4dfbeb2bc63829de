"""Query / item towers with shared building blocks and an L2-normalised output."""
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F


def mlp(dims, act=nn.ReLU, norm=None):
    layers = []
    for a, b in zip(dims[:-1], dims[1:]):
        layers.append(nn.Linear(a, b))
        if norm is not None:
            layers.append(norm(b))
        layers.append(act())
    return nn.Sequential(*layers[:-1])


class Tower(nn.Module):
    def __init__(self, vocab, dim, out_dim, norm=functools.partial(nn.LayerNorm, eps=1e-6)):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, dim, mode="mean", padding_idx=0)
        self.mlp = mlp([dim, 32, out_dim], norm=norm)

    def forward(self, token_ids):
        return F.normalize(self.mlp(self.emb(token_ids)), dim=-1)


class TwoTower(nn.Module):
    def __init__(self, vocab=200, dim=16, out_dim=8, temperature=0.07):
        super().__init__()
        self.query_tower = Tower(vocab, dim, out_dim)
        self.item_tower = Tower(vocab, dim, out_dim)
        self.temperature = temperature

    def forward(self, q_ids, i_ids, item_freq=None):
        q = self.query_tower(q_ids)
        it = self.item_tower(i_ids)
        logits = q @ it.t() / self.temperature
        if item_freq is not None:
            logits = logits - torch.log(item_freq)[None, :]   # sampled-softmax logQ correction
        labels = torch.arange(q.size(0))
        return F.cross_entropy(logits, labels)
