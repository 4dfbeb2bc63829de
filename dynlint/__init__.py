"""dynlint: find the lines that break torch.compile graphs or force recompiles.

The static linter (``dynlint check``) never imports torch; ``dynlint check --verify``
compiles the user's examples for real (see :func:`example`).
"""
from dynlint.linter.version import __version__
from dynlint.runtime_check.examples import example

__all__ = ["__version__", "example"]
