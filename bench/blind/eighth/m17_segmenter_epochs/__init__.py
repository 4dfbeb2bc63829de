"""Tiny semantic segmenter trained with alternating train / validation epochs."""
from .run import main

__all__ = ["main"]
