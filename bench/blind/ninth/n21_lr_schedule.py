"""Functional SGD-with-momentum step (foreach style) compiled; lr from a warmup+cosine schedule."""
import math
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


@torch.compile
def sgd_momentum_step(params, grads, bufs, lr: float, momentum: float, weight_decay: float,
                      warmup: bool):
    for p, g, buf in zip(params, grads, bufs):
        if weight_decay != 0.0 and not warmup:
            g = g.add(p, alpha=weight_decay)
        buf.mul_(momentum).add_(g)
        p.add_(buf, alpha=-lr)


def lr_at(step, base_lr, warmup_steps, total_steps, min_lr=1e-5):
    if step < warmup_steps:
        return base_lr * (step + 1) / warmup_steps
    progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
    return min_lr + 0.5 * (base_lr - min_lr) * (1.0 + math.cos(math.pi * progress))


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)


def main():
    torch.manual_seed(0)
    random.seed(0)
    model = Regressor()
    params = [p for p in model.parameters()]
    bufs = [torch.zeros_like(p) for p in params]
    w_true = torch.randn(8, 1)
    total, warmup = 10, 3
    for step in range(total):
        x = torch.randn(32, 8)
        y = x @ w_true + 0.01 * torch.randn(32, 1)
        loss = F.mse_loss(model(x), y)
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            sgd_momentum_step([p.data for p in params], [p.grad for p in params], bufs,
                              lr_at(step, 0.05, warmup, total), 0.9, 1e-4, step < warmup)
    return loss.item()


if __name__ == "__main__":
    print(main())
