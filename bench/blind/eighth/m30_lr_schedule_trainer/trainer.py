"""Trainer holding optimizer state on itself; the parameter update is a compiled method."""
from __future__ import annotations

from typing import List

import torch
import torch.nn as nn


class MomentumTrainer:
    def __init__(self, model: nn.Module, momentum: float = 0.9, nesterov: bool = True) -> None:
        self.model = model
        self.params: List[nn.Parameter] = list(model.parameters())
        self.bufs = [torch.zeros_like(p) for p in self.params]
        self.momentum = momentum
        self.nesterov = nesterov
        self.lr = 0.0
        self.weight_decay = 0.0

    @torch.compile
    def apply_update(self) -> None:
        with torch.no_grad():
            for p, buf in zip(self.params, self.bufs):
                g = p.grad + self.weight_decay * p
                buf.mul_(self.momentum).add_(g)
                step = g + self.momentum * buf if self.nesterov else buf
                p.sub_(self.lr * step)

    def train_step(self, x: torch.Tensor, y: torch.Tensor) -> float:
        loss = nn.functional.cross_entropy(self.model(x), y)
        for p in self.params:
            p.grad = None
        loss.backward()
        self.apply_update()
        return loss.item()
