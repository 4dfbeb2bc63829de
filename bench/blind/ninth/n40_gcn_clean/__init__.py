"""Graph node classification with a precomputed sparse-normalised adjacency; compiled layer fn in layers.py."""
from .run import main  # noqa: F401
