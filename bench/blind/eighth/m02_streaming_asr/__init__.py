"""Streaming (chunked) speech encoder with carried convolution/attention state."""
from .run import main

__all__ = ["main"]
