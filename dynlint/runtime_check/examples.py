"""`@dynlint.example`: user-written example providers for `dynlint check --verify`.

Importing this module never imports torch: it only marks factories, which the verify worker calls.
"""
from __future__ import annotations

from typing import Callable, List, Optional

_MARK = "__dynlint_example__"


def example(fn: Optional[Callable] = None, *, name: Optional[str] = None, rtol: Optional[float] = None,
            atol: Optional[float] = None):
    """Mark a zero-argument factory that returns ``(callable, [args_tuple, ...])``.

    Usage: ``@dynlint.example`` or ``@dynlint.example(name="mlp", rtol=1e-3)``.
    """
    def mark(f: Callable) -> Callable:
        setattr(f, _MARK, {"name": name or f.__name__, "rtol": rtol, "atol": atol})
        return f

    return mark(fn) if fn is not None else mark


def is_example(obj) -> bool:
    return callable(obj) and hasattr(obj, _MARK)


def example_options(obj) -> dict:
    return dict(getattr(obj, _MARK))


def collect(namespace: dict) -> List[Callable]:
    return [v for v in namespace.values() if is_example(v)]
