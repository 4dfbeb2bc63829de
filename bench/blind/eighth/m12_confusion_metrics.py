"""Streaming classification metrics (confusion matrix, per-class F1) with periodic logging."""
from __future__ import annotations

import logging
from typing import Dict

import torch
import torch.nn as nn

log = logging.getLogger("metrics")


class ConfusionMatrix:
    """Accumulates a KxK confusion matrix across evaluation batches."""

    global_step = 0
    log_every = 2

    def __init__(self, num_classes: int, ignore_index: int = -100) -> None:
        self.num_classes = num_classes
        self.ignore_index = ignore_index
        self.mat = torch.zeros(num_classes, num_classes, dtype=torch.long)

    @torch.compile
    def update(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        pred = logits.argmax(dim=-1)
        valid = target != self.ignore_index
        k = self.num_classes
        idx = target[valid] * k + pred[valid]
        batch_mat = torch.bincount(idx, minlength=k * k).reshape(k, k)
        self.mat += batch_mat
        ConfusionMatrix.global_step += 1
        if ConfusionMatrix.global_step % self.log_every == 0:
            log.info("step %d: seen %d samples", ConfusionMatrix.global_step, int(self.mat.sum()))
        return (pred[valid] == target[valid]).float().mean()

    def compute(self) -> Dict[str, torch.Tensor]:
        tp = self.mat.diag().float()
        precision = tp / self.mat.sum(0).clamp(min=1)
        recall = tp / self.mat.sum(1).clamp(min=1)
        f1 = 2 * precision * recall / (precision + recall).clamp(min=1e-8)
        return {"precision": precision, "recall": recall, "f1": f1, "macro_f1": f1.mean()}


def main() -> None:
    logging.basicConfig(level=logging.WARNING)
    torch.manual_seed(0)
    model = nn.Linear(12, 4).eval()
    cm = ConfusionMatrix(num_classes=4)
    with torch.no_grad():
        for i in range(5):
            x = torch.randn(10, 12)
            y = torch.randint(0, 4, (10,))
            y[i] = -100
            acc = cm.update(model(x), y)
            print(i, round(acc.item(), 3))
    print({k: v.tolist() for k, v in cm.compute().items()})


if __name__ == "__main__":
    main()
