"""Recommendation: a two-tower retrieval model; the DataLoader keeps the short last batch (drop_last=False)."""
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Tower(nn.Module):
    def __init__(self, n_ids, n_feats, d=16):
        super().__init__()
        self.id_emb = nn.Embedding(n_ids, d)
        self.feat_emb = nn.EmbeddingBag(n_feats, d, mode="mean")
        self.mlp = nn.Sequential(nn.Linear(2 * d, 32), nn.ReLU(), nn.Linear(32, d))

    def forward(self, ids, feats):
        return F.normalize(self.mlp(torch.cat([self.id_emb(ids), self.feat_emb(feats)], dim=-1)), dim=-1)


class TwoTower(nn.Module):
    def __init__(self, n_users=50, n_items=80, n_feats=30, temperature=0.05):
        super().__init__()
        self.user = Tower(n_users, n_feats)
        self.item = Tower(n_items, n_feats)
        self.temperature = temperature

    def forward(self, uid, ufeat, iid, ifeat):
        u = self.user(uid, ufeat)
        v = self.item(iid, ifeat)
        logits = u @ v.T / self.temperature
        labels = torch.arange(u.shape[0])
        return F.cross_entropy(logits, labels)


def loader(n, batch_size, rng):
    perm = rng.permutation(n)
    for i in range(0, n, batch_size):
        idx = perm[i:i + batch_size]
        yield idx


def main():
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    rng = np.random.RandomState(0)
    n = 70
    uid = torch.randint(0, 50, (n,))
    iid = torch.randint(0, 80, (n,))
    ufeat = torch.randint(0, 30, (n, 3))
    ifeat = torch.randint(0, 30, (n, 4))
    model = TwoTower()
    train_step = torch.compile(model)
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05)
    for epoch in range(3):
        for idx in loader(n, 32, rng):  # 32, 32, 6
            idx = torch.from_numpy(idx)
            loss = train_step(uid[idx], ufeat[idx], iid[idx], ifeat[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return loss.item()


if __name__ == "__main__":
    print(main())
