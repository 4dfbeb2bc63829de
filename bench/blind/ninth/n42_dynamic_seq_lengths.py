"""Keyword-spotting conv net over variable-length MFCC sequences compiled with dynamic=True."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


class DSConvBlock(nn.Module):
    """Depthwise-separable 1-D conv block (as in small-footprint KWS models)."""

    def __init__(self, ch, k=5):
        super().__init__()
        self.dw = nn.Conv1d(ch, ch, k, padding=k // 2, groups=ch)
        self.pw = nn.Conv1d(ch, ch, 1)
        self.bn = nn.BatchNorm1d(ch)

    def forward(self, x):
        return F.relu(self.bn(self.pw(self.dw(x)))) + x


class KWSNet(nn.Module):
    def __init__(self, n_mfcc=10, ch=16, n_blocks=3, n_keywords=6):
        super().__init__()
        self.inp = nn.Conv1d(n_mfcc, ch, 3, padding=1)
        self.blocks = nn.Sequential(*[DSConvBlock(ch) for _ in range(n_blocks)])
        self.fc = nn.Linear(ch, n_keywords)

    def forward(self, mfcc, lengths):
        # mfcc: [B, n_mfcc, T]; average only over valid frames
        h = self.blocks(F.relu(self.inp(mfcc)))
        mask = (torch.arange(h.shape[-1])[None, :] < lengths[:, None]).to(h.dtype)
        pooled = (h * mask[:, None, :]).sum(-1) / lengths[:, None].to(h.dtype)
        return self.fc(pooled)


def main():
    torch.manual_seed(0)
    random.seed(0)
    model = KWSNet()
    cmodel = torch.compile(model, dynamic=True)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(6):
        T = random.choice([40, 48, 56, 64])
        lengths = torch.randint(T // 2, T + 1, (8,))
        x = torch.randn(8, 10, T)
        y = torch.randint(0, 6, (8,))
        loss = F.cross_entropy(cmodel(x, lengths), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


if __name__ == "__main__":
    print(main())
