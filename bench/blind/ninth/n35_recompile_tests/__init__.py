"""A framework-style unit-test module for recompilation behaviour, run through unittest."""
from .run import main  # noqa: F401
