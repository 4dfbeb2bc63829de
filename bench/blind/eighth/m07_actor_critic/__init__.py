"""Advantage actor-critic on a toy continuous-control task."""
from .run import main

__all__ = ["main"]
