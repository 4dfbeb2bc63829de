"""Compare compiled outputs with eager outputs: nested tensors, sequences, dicts, dataclasses, numbers.

Only the verify worker imports this module (it imports torch).
"""
from __future__ import annotations

import dataclasses
import math
from typing import List, Optional, Sequence, Tuple

import torch

from dynlint.runtime_check.results import Agreement

# (rtol, atol) by dtype: Inductor reorders reductions and fuses ops, so results differ in the last bits.
_TOLERANCE = {
    torch.float64: (1e-7, 1e-7),
    torch.float32: (1e-4, 1e-5),
    torch.float16: (1e-2, 1e-3),
    torch.bfloat16: (1.6e-2, 1e-2),
}
_DEFAULT_FLOAT_TOLERANCE = (1e-2, 1e-2)      # float8 and other narrow floats


def snapshot(value):
    """A copy that later in-place updates (of inputs, module buffers, returned caches) cannot change."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, (list, tuple)) and not _is_namedtuple(value):
        return type(value)(snapshot(v) for v in value)
    if _is_namedtuple(value):
        return type(value)(*(snapshot(v) for v in value))
    if isinstance(value, dict):
        try:
            return type(value)((k, snapshot(v)) for k, v in value.items())
        except Exception:                   # dict subclasses with another constructor (e.g. model outputs)
            return {k: snapshot(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: snapshot(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return value


class _Diff:
    def __init__(self, rtol: Optional[float], atol: Optional[float]):
        self.rtol, self.atol = rtol, atol
        self.max_abs = None             # type: Optional[float]
        self.problems: List[Tuple[str, str]] = []   # (where, what)

    def compare(self, eager, compiled, where: str) -> None:
        if isinstance(eager, torch.Tensor) or isinstance(compiled, torch.Tensor):
            self._tensors(eager, compiled, where)
        elif _is_mapping(eager) and _is_mapping(compiled):
            e, c = _as_mapping(eager), _as_mapping(compiled)
            if set(e) != set(c):
                self.problems.append((where, f"keys differ: {sorted(map(str, e))} vs {sorted(map(str, c))}"))
            for key in e:
                if key in c:
                    self.compare(e[key], c[key], f"{where}[{key!r}]")
        elif isinstance(eager, (list, tuple)) and isinstance(compiled, (list, tuple)):
            if len(eager) != len(compiled):
                self.problems.append((where, f"length {len(eager)} vs {len(compiled)}"))
            for i, (e, c) in enumerate(zip(eager, compiled)):
                self.compare(e, c, f"{where}[{i}]")
        elif isinstance(eager, float) and isinstance(compiled, (int, float)):
            self._floats(float(eager), float(compiled), where)
        else:
            try:
                same = bool(eager == compiled)
            except Exception:           # objects without a usable ==: nothing to compare
                return
            if not same:
                self.problems.append((where, f"{_short(eager)} vs {_short(compiled)}"))

    def _tensors(self, e, c, where: str) -> None:
        if not (isinstance(e, torch.Tensor) and isinstance(c, torch.Tensor)):
            self.problems.append((where, f"type {type(e).__name__} vs {type(c).__name__}"))
            return
        if e.shape != c.shape:
            self.problems.append((where, f"shape {tuple(e.shape)} vs {tuple(c.shape)}"))
            return
        if e.dtype != c.dtype:
            self.problems.append((where, f"dtype {e.dtype} vs {c.dtype}"))
            return
        if e.layout != torch.strided or c.layout != torch.strided:
            e, c = e.to_dense(), c.to_dense()
        if e.numel() == 0:
            return
        e, c = e.detach(), c.detach().to(e.device)
        if e.is_floating_point() or e.is_complex():
            rtol, atol = _TOLERANCE.get(e.dtype, _DEFAULT_FLOAT_TOLERANCE)
            rtol = self.rtol if self.rtol is not None else rtol
            atol = self.atol if self.atol is not None else atol
            diff = (e.to(torch.float64 if e.is_floating_point() else torch.complex128)
                    - c.to(torch.float64 if c.is_floating_point() else torch.complex128)).abs()
            finite = torch.isfinite(diff)
            worst = float(diff[finite].max()) if bool(finite.any()) else 0.0
            self.max_abs = worst if self.max_abs is None else max(self.max_abs, worst)
            if not torch.allclose(c, e, rtol=rtol, atol=atol, equal_nan=True):
                self.problems.append((where, f"values differ: max abs diff {worst:.3g} (rtol={rtol:g}, atol={atol:g})"))
        elif not torch.equal(e, c):
            worst = float((e.to(torch.float64) - c.to(torch.float64)).abs().max())
            self.max_abs = worst if self.max_abs is None else max(self.max_abs, worst)
            self.problems.append((where, f"values differ: max abs diff {worst:.3g} (exact dtype {e.dtype})"))

    def _floats(self, e: float, c: float, where: str) -> None:
        if math.isnan(e) and math.isnan(c):
            return
        rtol = self.rtol if self.rtol is not None else 1e-5
        atol = self.atol if self.atol is not None else 1e-6
        diff = abs(e - c)
        self.max_abs = diff if self.max_abs is None else max(self.max_abs, diff)
        if not diff <= atol + rtol * abs(e):
            self.problems.append((where, f"{e!r} vs {c!r}"))


def compare_outputs(eager: Sequence, compiled: Sequence, rtol: Optional[float] = None,
                    atol: Optional[float] = None) -> Agreement:
    """Compare the outputs of each call (eager[i] vs compiled[i]); the first problem is reported."""
    diff = _Diff(rtol, atol)
    for i, (e, c) in enumerate(zip(eager, compiled)):
        diff.compare(e, c, f"call {i}: out")
    if diff.problems:
        where, what = diff.problems[0]
        more = f" (and {len(diff.problems) - 1} more)" if len(diff.problems) > 1 else ""
        return Agreement("mismatch", diff.max_abs, where, what + more)
    return Agreement("match", diff.max_abs if diff.max_abs is not None else 0.0)


def _is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(value, "_fields")


def _is_mapping(value) -> bool:
    return isinstance(value, dict) or (dataclasses.is_dataclass(value) and not isinstance(value, type))


def _as_mapping(value) -> dict:
    if isinstance(value, dict):
        return value
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
