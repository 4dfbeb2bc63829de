"""Learning-rate and weight-decay schedules."""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass
class WarmupCosine:
    base_lr: float
    warmup_steps: int
    total_steps: int
    min_lr: float = 0.0

    def __call__(self, step: int) -> float:
        if step < self.warmup_steps:
            return self.base_lr * (step + 1) / self.warmup_steps
        t = (step - self.warmup_steps) / max(1, self.total_steps - self.warmup_steps)
        return self.min_lr + 0.5 * (self.base_lr - self.min_lr) * (1 + math.cos(math.pi * t))


def weight_decay_for(step: int, start: float = 0.04, end: float = 0.4, total: int = 10) -> float:
    return start + (end - start) * min(1.0, step / total)
