"""SGD-with-momentum trainer whose fused update is compiled; LR comes from a warmup+cosine schedule."""
from .run import main

__all__ = ["main"]
