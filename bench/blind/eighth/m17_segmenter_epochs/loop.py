"""Epoch-level train / evaluate helpers."""
from __future__ import annotations

from typing import Iterable, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


def train_one_epoch(model: nn.Module, opt: torch.optim.Optimizer,
                    batches: Iterable[Tuple[torch.Tensor, torch.Tensor]]) -> float:
    model.train()
    total = 0.0
    for img, mask in batches:
        loss = F.cross_entropy(model(img), mask)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    return total


@torch.no_grad()
def evaluate(model: nn.Module, batches: Iterable[Tuple[torch.Tensor, torch.Tensor]], n_cls: int) -> float:
    model.eval()
    inter = torch.zeros(n_cls)
    union = torch.zeros(n_cls)
    for img, mask in batches:
        pred = model(img).argmax(1)
        for c in range(n_cls):
            inter[c] += ((pred == c) & (mask == c)).sum()
            union[c] += ((pred == c) | (mask == c)).sum()
    return (inter / union.clamp(min=1)).mean().item()
