"""Instance-segmentation inference: per-image mask pasting and per-class mask IoU reporting."""
from .run import main

__all__ = ["main"]
