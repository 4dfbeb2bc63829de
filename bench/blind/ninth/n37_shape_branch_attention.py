"""Attention pooling that accepts batched/unbatched inputs and optional masks: shape-driven branching only."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


class AttentionPool(nn.Module):
    def __init__(self, d_in=16, d_model=16, n_heads=2):
        super().__init__()
        self.d_model = d_model
        self.n_heads = n_heads
        self.proj = nn.Linear(d_in, d_model) if d_in != d_model else nn.Identity()
        self.query = nn.Parameter(torch.randn(1, 1, d_model) * 0.02)
        self.kv = nn.Linear(d_model, 2 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        unbatched = x.dim() == 2
        if unbatched:
            x = x.unsqueeze(0)
            if isinstance(mask, torch.Tensor):
                mask = mask.unsqueeze(0)
        if x.shape[-1] != self.d_model:
            x = self.proj(x)
        b, n, d = x.shape
        h = self.n_heads
        k, v = self.kv(x).chunk(2, dim=-1)
        q = self.query.expand(b, -1, -1)
        q = q.view(b, 1, h, d // h).transpose(1, 2)
        k = k.view(b, n, h, d // h).transpose(1, 2)
        v = v.view(b, n, h, d // h).transpose(1, 2)
        scores = (q @ k.transpose(-1, -2)) / (d // h) ** 0.5
        if mask is not None:
            scores = torch.where(mask[:, None, None, :], scores, torch.full_like(scores, -1e4))
        attn = F.softmax(scores, dim=-1)
        pooled = (attn @ v).transpose(1, 2).reshape(b, d)
        pooled = self.out(pooled)
        return pooled[0] if unbatched else pooled


class SetClassifier(nn.Module):
    def __init__(self, d_in=12, n_classes=3):
        super().__init__()
        self.embed = nn.Sequential(nn.Linear(d_in, 16), nn.GELU())
        self.pool = AttentionPool(16, 16)
        self.head = nn.Linear(16, n_classes)

    def forward(self, x, mask=None):
        return self.head(self.pool(self.embed(x), mask))


def main():
    torch.manual_seed(0)
    random.seed(0)
    model = SetClassifier()
    cmodel = torch.compile(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    mask = torch.ones(4, 10, dtype=torch.bool)
    mask[:, 8:] = False
    for step in range(5):
        x = torch.randn(4, 10, 12)
        y = torch.randint(0, 3, (4,))
        loss = F.cross_entropy(cmodel(x, mask), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


if __name__ == "__main__":
    print(main())
