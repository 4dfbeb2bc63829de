"""Samples (op, magnitude) pairs per batch."""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import List, Tuple

OPS = ["hflip", "brightness", "contrast", "cutout"]


@dataclass
class RandAugmentPolicy:
    num_ops: int = 2
    max_magnitude: float = 0.4
    seed: int = 0

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def sample(self) -> List[Tuple[str, float]]:
        ops = self._rng.sample(OPS, self.num_ops)
        return [(op, round(self._rng.uniform(0.05, self.max_magnitude), 2)) for op in ops]
