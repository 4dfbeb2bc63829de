"""A hand-rolled AdamW whose per-step math is compiled, driven by a cosine LR schedule."""
from __future__ import annotations

import math
from typing import List

import torch
import torch.nn as nn


@torch.compile
def adamw_update(params: List[torch.Tensor], grads: List[torch.Tensor], exp_avgs: List[torch.Tensor],
                 exp_avg_sqs: List[torch.Tensor], lr: float, step: int, beta1: float = 0.9,
                 beta2: float = 0.999, eps: float = 1e-8, weight_decay: float = 0.01) -> None:
    bc1 = 1 - beta1 ** step
    bc2 = 1 - beta2 ** step
    for p, g, m, v in zip(params, grads, exp_avgs, exp_avg_sqs):
        p.mul_(1 - lr * weight_decay)
        m.lerp_(g, 1 - beta1)
        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        denom = (v / bc2).sqrt().add_(eps)
        p.addcdiv_(m, denom, value=-lr / bc1)


class AdamW:
    def __init__(self, params, lr: float = 1e-3, weight_decay: float = 0.01) -> None:
        self.params = [p for p in params if p.requires_grad]
        self.lr = lr
        self.weight_decay = weight_decay
        self.step_count = 0
        self.exp_avgs = [torch.zeros_like(p) for p in self.params]
        self.exp_avg_sqs = [torch.zeros_like(p) for p in self.params]

    @torch.no_grad()
    def step(self) -> None:
        self.step_count += 1
        grads = [p.grad for p in self.params]
        adamw_update(self.params, grads, self.exp_avgs, self.exp_avg_sqs, self.lr, self.step_count,
                     weight_decay=self.weight_decay)

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None


def cosine_lr(step: int, total: int, base: float, warmup: int = 2) -> float:
    if step < warmup:
        return base * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return 0.5 * base * (1 + math.cos(math.pi * progress))


def main() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 1))
    opt = AdamW(model.parameters(), lr=1e-2)
    x, y = torch.randn(64, 10), torch.randn(64, 1)
    total = 8
    for step in range(total):
        opt.lr = cosine_lr(step, total, base=1e-2)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, round(opt.lr, 5), round(loss.item(), 4))


if __name__ == "__main__":
    main()
