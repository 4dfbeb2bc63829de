import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .optim import HandAdamW


def cosine_lr(step, base_lr, total, warmup=2):
    if step < warmup:
        return base_lr * (step + 1) / warmup
    t = (step - warmup) / max(1, total - warmup)
    return 0.5 * base_lr * (1 + math.cos(math.pi * t))


def main():
    torch.manual_seed(0)
    backbone = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
    head = nn.Linear(16, 2)
    for p in backbone.parameters():
        p.requires_grad_(False)
    opt = HandAdamW(head.parameters(), lr=1e-2)
    total = 6
    for step in range(total):
        if step == 3:
            # unfreeze the backbone with a smaller learning rate
            for p in backbone.parameters():
                p.requires_grad_(True)
            opt.add_param_group({"params": list(backbone.parameters()), "lr": 1e-3})
        opt.param_groups[0]["lr"] = cosine_lr(step, 1e-2, total)
        x = torch.randn(16, 8)
        y = (x.sum(-1) > 0).long()
        loss = F.cross_entropy(head(backbone(x)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
