"""GPU-style batched image augmentation driven by a RandAugment-like policy."""
from .run import main

__all__ = ["main"]
