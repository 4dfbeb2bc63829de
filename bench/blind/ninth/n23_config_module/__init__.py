"""Segmentation training script whose hyper-parameters live in a config module edited between epochs."""
from .run import main  # noqa: F401
