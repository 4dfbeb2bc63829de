"""Two-tower retrieval training with in-batch negatives, annealed temperature, and a recall@k evaluation."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Tower(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))

    def forward(self, ids):
        return F.normalize(self.mlp(self.emb(ids).mean(1)), dim=-1)


class TwoTower(nn.Module):
    def __init__(self, n_users, n_items, dim=16):
        super().__init__()
        self.user = Tower(n_users, dim)
        self.item = Tower(n_items, dim)


def in_batch_softmax_loss(model, user_hist, item_feats, temperature, item_log_q=None):
    u = model.user(user_hist)
    v = model.item(item_feats)
    logits = u @ v.T / temperature
    if item_log_q is not None:
        logits = logits - item_log_q[None, :]
    labels = torch.arange(u.shape[0])
    return F.cross_entropy(logits, labels)


def recall_at_k(model, user_hist, target_items, all_item_feats, k):
    u = model.user(user_hist)
    v = model.item(all_item_feats)
    topk = (u @ v.T).topk(k, dim=1).indices
    hits = 0
    for row, tgt in zip(topk.tolist(), target_items.tolist()):
        hits += int(tgt in row)
    return hits / target_items.shape[0]


def main():
    torch.manual_seed(0)
    model = TwoTower(100, 60)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss_fn = torch.compile(in_batch_softmax_loss, backend="eager")
    total_steps = 3
    for step in range(total_steps):
        temperature = 0.2 - 0.15 * step / (total_steps - 1)
        hist = torch.randint(0, 100, (8, 5))
        items = torch.randint(0, 60, (8, 3))
        log_q = torch.log(torch.full((8,), 1 / 60)) if step > 0 else None
        loss = loss_fn(model, hist, items, temperature, log_q)
        opt.zero_grad()
        loss.backward()
        opt.step()
    evaluate = torch.compile(recall_at_k, backend="eager")
    all_items = torch.randint(0, 60, (60, 3))
    with torch.no_grad():
        for k in (5, 10):
            evaluate(model, torch.randint(0, 100, (8, 5)), torch.randint(0, 60, (8,)), all_items, k)
