"""Two-tower retrieval with sampled softmax, logQ correction and hard negatives."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

N_USERS, N_ITEMS, DIM = 200, 400, 16


class Tower(nn.Module):
    def __init__(self, n, dim):
        super().__init__()
        self.emb = nn.Embedding(n, dim)
        self.proj = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))

    def forward(self, ids):
        return F.normalize(self.proj(self.emb(ids)), dim=-1)


class TwoTower(nn.Module):
    def __init__(self, temperature=0.05):
        super().__init__()
        self.user = Tower(N_USERS, DIM)
        self.item = Tower(N_ITEMS, DIM)
        self.temperature = temperature
        # popularity-based sampling distribution (Zipf-ish)
        probs = 1.0 / torch.arange(1, N_ITEMS + 1).float()
        self.register_buffer("item_probs", probs / probs.sum())

    def sample_negatives(self, n):
        return torch.multinomial(self.item_probs, n, replacement=True)

    def forward(self, users, pos_items, num_neg, hard_negatives):
        u = self.user(users)
        neg_ids = self.sample_negatives(num_neg)
        cand_ids = torch.cat([pos_items, neg_ids])
        cand_ids = torch.unique(cand_ids)
        cand = self.item(cand_ids)
        logits = u @ cand.T / self.temperature
        logits = logits - torch.log(self.item_probs[cand_ids] * len(cand_ids))
        target = torch.searchsorted(cand_ids, pos_items)
        if hard_negatives:
            # keep only the top-scoring negatives per user
            mask = F.one_hot(target, cand_ids.shape[0]).bool()
            neg_logits = logits.masked_fill(mask, -math.inf)
            k = min(8, cand_ids.shape[0] - 1)
            hard = neg_logits.topk(k, dim=1).values
            pos = logits.gather(1, target[:, None])
            logits = torch.cat([pos, hard], dim=1)
            target = torch.zeros_like(target)
        return F.cross_entropy(logits, target)


def interactions(n, gen):
    users = torch.randint(0, N_USERS, (n,), generator=gen)
    items = (users * 7 + torch.randint(0, 5, (n,), generator=gen)) % N_ITEMS
    return users, items


def main():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    model = TwoTower()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    step_fn = torch.compile(model)
    schedule = [(16, False), (32, False), (64, True), (64, True)]
    losses = []
    for num_neg, hard in schedule:
        users, items = interactions(32, gen)
        loss = step_fn(users, items, num_neg, hard)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses
