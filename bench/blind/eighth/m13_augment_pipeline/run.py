"""Applies the sampled policy to each incoming batch (multi-scale training sizes)."""
from __future__ import annotations

import torch

from .policy import RandAugmentPolicy
from .transforms import apply_op

TRAIN_SIZES = [(32, 32), (32, 32), (28, 28), (36, 36)]


def augment_batch(images: torch.Tensor, policy: RandAugmentPolicy, size) -> torch.Tensor:
    for op, mag in policy.sample():
        images = apply_op(images, op, mag, size)
    return images


def main() -> None:
    torch.manual_seed(0)
    policy = RandAugmentPolicy()
    for step, size in enumerate(TRAIN_SIZES):
        batch = torch.rand(4, 3, 32, 32)
        out = augment_batch(batch, policy, size)
        print(step, tuple(out.shape), round(float(out.mean()), 4))


if __name__ == "__main__":
    main()
