"""`@dynlint.example`: user-written example providers for `dynlint check --verify`.

Importing this module never imports torch: it only marks factories, which the verify worker calls.
"""
from __future__ import annotations

from typing import Callable, Optional

_MARK = "__dynlint_example__"


def example(fn: Optional[Callable] = None, *, name: Optional[str] = None, rtol: Optional[float] = None,
            atol: Optional[float] = None, timeout: Optional[float] = None, training: bool = False):
    """Mark a zero-argument factory that returns ``(callable, [args_tuple, ...])``.

    Usage: ``@dynlint.example`` or ``@dynlint.example(name="mlp", rtol=1e-3)``.

    - callable: a function or an ``nn.Module``; it is compiled with ``torch.compile``.
    - each element of the list is one call; several exercise recompiles (batch 8, then 16, ...). A tuple
      or list holds the positional arguments, a dict the keyword arguments; anything else is the single
      positional argument. The factory runs twice (seeded alike): once for eager, once for compiled.
    - the factory may instead return ``{"fn": callable, "inputs": [args_tuple, ...]}``.
    - a factory that takes a ``device`` parameter receives ``"cpu"`` or ``"cuda"``; otherwise dynlint moves
      the returned module and the tensors among the inputs to that device.
    - rtol / atol: tolerance of the compiled-vs-eager comparison (default: by dtype).
    - timeout: seconds for this example (a literal number; read without importing the file), overriding
      the run's ``--verify-timeout``.
    - training: the callable is a module trained by the example: every call is then a training step
      (forward, a loss, backward, an optimizer step), in eager and compiled alike, so that the timing is
      that of what training compiles. The loss is the sum of the means of the floating-point outputs unless
      the factory's dict gives ``"loss": fn(output) -> tensor``; the optimizer is SGD (lr 1e-3) unless it
      gives ``"optimizer": fn(parameters) -> optimizer``. Outputs are compared at the first call, before
      any step.
    """
    def mark(f: Callable) -> Callable:
        setattr(f, _MARK, {"name": name or f.__name__, "rtol": rtol, "atol": atol, "timeout": timeout,
                           "training": bool(training)})
        return f

    return mark(fn) if fn is not None else mark


def is_example(obj) -> bool:
    return callable(obj) and hasattr(obj, _MARK)
