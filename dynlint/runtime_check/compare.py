"""Compare compiled outputs with eager outputs leaf by leaf: the tensors inside sequences, dicts, named tuples,
dataclasses (transformers' ModelOutput) and arbitrary objects (a DynamicCache's `layers[0].keys`), and numbers.

Tolerances follow PyTorch's benchmark harness (`torch._dynamo.utils.same`): a floating-point leaf first gets
allclose with its dtype's tolerance; where that fails it is judged against a float64 reference (the example run
again in float64): compiled is accepted when its RMSE from the reference is at most `multiplier x` eager's own
RMSE from it `+ atol/10` - it is no less accurate than eager's rounding. A user's explicit rtol/atol on
`@dynlint.example` is plain allclose.

Only the verify worker imports this module (it imports torch).
"""
from __future__ import annotations

import dataclasses
import math
import types
from typing import Callable, List, Optional, Sequence, Tuple

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
_HALF = (torch.float16, torch.bfloat16)
OBJECT_DEPTH = 4         # attributes of plain objects followed this deep (a cache -> its layers -> their tensors)
_NOT_WALKED = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
               torch.nn.Module)


class Fields(dict):
    """A snapshot of a dataclass (ModelOutput) or of an object that holds tensors: its fields by name, compared
    by path (`out.cache.layers[0].keys`)."""

    def __init__(self, type_name: str, items: dict):
        super().__init__(items)
        self.type_name = type_name


def snapshot(value, depth: int = OBJECT_DEPTH):
    """A copy that later in-place updates (of inputs, module buffers, returned caches) cannot change. Objects
    are copied as the tensors they hold (Fields); an object holding none is kept as it is."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if _is_namedtuple(value):
        return type(value)(*(snapshot(v, depth) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(snapshot(v, depth) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = value.items() if isinstance(value, dict) else \
            ((f.name, getattr(value, f.name, None)) for f in dataclasses.fields(value))   # ModelOutput: its set fields
        return Fields(type(value).__name__, {k: snapshot(v, depth) for k, v in items})
    if isinstance(value, dict):
        try:
            return type(value)((k, snapshot(v, depth)) for k, v in value.items())
        except Exception:                   # dict subclasses with another constructor
            return {k: snapshot(v, depth) for k, v in value.items()}
    if depth > 0 and not isinstance(value, _NOT_WALKED):
        try:
            fields = {name: snapshot(v, depth - 1) for name, v in _attributes(value)}
        except Exception:                   # noqa: BLE001 - an attribute that raises on access: not walked
            return value
        if _holds_tensor(fields):
            return Fields(type(value).__name__, fields)
    return value


def _attributes(value):
    """(name, value) of an object's instance attributes: its __dict__ and its __slots__."""
    found = dict(vars(value)) if hasattr(value, "__dict__") else {}
    for cls in type(value).__mro__:
        slots = getattr(cls, "__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in found and name not in ("__dict__", "__weakref__") and hasattr(value, name):
                found[name] = getattr(value, name)
    return found.items()


def _holds_tensor(value) -> bool:
    if isinstance(value, torch.Tensor):
        return True
    if isinstance(value, dict):
        return any(_holds_tensor(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_holds_tensor(v) for v in value)
    return False


class NoReference(Exception):
    """No float64 reference can be made for this example (the message says why)."""


_MISSING = object()


class _Diff:
    def __init__(self, rtol: Optional[float], atol: Optional[float], against_float64: bool = False,
                 no_reference: str = ""):
        self.rtol, self.atol = rtol, atol
        self.against_float64 = against_float64     # the second pass: a leaf outside allclose meets the float64 rule
        self.no_reference = no_reference           # why the float64 outputs could not be had ("" when they could)
        self.max_abs = None             # type: Optional[float]
        self.problems: List[Tuple[str, str]] = []   # (where, what)
        self.accepted: List[Tuple[str, str]] = []   # (where, the RMSE rule's figures): outside allclose, yet accepted
        self.float_failures = 0                     # floating-point leaves outside allclose

    def compare(self, eager, compiled, where: str, ref=_MISSING) -> None:
        """ref: the float64 reference's value at the same place (_MISSING where it has none)."""
        if isinstance(eager, torch.Tensor) or isinstance(compiled, torch.Tensor):
            self._tensors(eager, compiled, where, ref)
        elif isinstance(eager, Fields) and isinstance(compiled, Fields):
            if eager.type_name != compiled.type_name:
                self.problems.append((where, f"type {eager.type_name} vs {compiled.type_name}"))
            else:
                self._items(eager, compiled, ref, where, lambda key: f"{where}.{key}")
        elif isinstance(eager, dict) and isinstance(compiled, dict):
            self._items(eager, compiled, ref, where, lambda key: f"{where}[{key!r}]")
        elif isinstance(eager, (list, tuple)) and isinstance(compiled, (list, tuple)):
            if len(eager) != len(compiled):
                self.problems.append((where, f"length {len(eager)} vs {len(compiled)}"))
            for i, (e, c) in enumerate(zip(eager, compiled)):
                self.compare(e, c, f"{where}[{i}]", _child(ref, i))
        elif isinstance(eager, float) and isinstance(compiled, (int, float)):
            self._floats(float(eager), float(compiled), where)
        elif type(eager) is type(compiled) and eager is not None and type(eager).__eq__ is object.__eq__:
            return                      # objects with no tensors and only identity for ==: nothing to compare
        else:
            try:
                same = bool(eager == compiled)
            except Exception:           # objects without a usable ==: nothing to compare
                return
            if not same:
                self.problems.append((where, f"{_short(eager)} vs {_short(compiled)}"))

    def _items(self, e: dict, c: dict, ref, where: str, path: Callable[[object], str]) -> None:
        if set(e) != set(c):
            self.problems.append((where, f"keys differ: {sorted(map(str, e))} vs {sorted(map(str, c))}"))
        for key in e:
            if key in c:
                self.compare(e[key], c[key], path(key), _child(ref, key))

    def _tensors(self, e, c, where: str, ref) -> None:
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
            wide = torch.float64 if e.is_floating_point() else torch.complex128
            diff = (e.to(wide) - c.to(wide)).abs()
            finite = torch.isfinite(diff)
            worst = float(diff[finite].max()) if bool(finite.any()) else 0.0
            self.max_abs = worst if self.max_abs is None else max(self.max_abs, worst)
            if torch.allclose(c, e, rtol=rtol, atol=atol, equal_nan=True):
                return
            what = f"values differ: max abs diff {worst:.3g} (rtol={rtol:g}, atol={atol:g})"
            if e.is_floating_point():
                self.float_failures += 1
                if self.against_float64:
                    accepted, figures = self._against_float64(e, c, ref, atol)
                    if accepted:
                        self.accepted.append((where, figures))
                        return
                    what += f"; {figures}"
            self.problems.append((where, what))
        elif not torch.equal(e, c):
            worst = float((e.to(torch.float64) - c.to(torch.float64)).abs().max())
            self.max_abs = worst if self.max_abs is None else max(self.max_abs, worst)
            self.problems.append((where, f"values differ: max abs diff {worst:.3g} (exact dtype {e.dtype})"))

    def _against_float64(self, e, c, ref, tol: float) -> Tuple[bool, str]:
        """torch._dynamo.utils.same's rule: (accepted, the figures that decided, or why none could)."""
        if self.no_reference:
            return False, f"no float64 reference could be made: {self.no_reference}"
        if not (isinstance(ref, torch.Tensor) and ref.dtype == torch.float64 and ref.shape == e.shape):
            return False, "no float64 reference for this output (the float64 run gave no float64 tensor here)"
        ref = ref.detach().to(e.device)
        eager_rmse, compiled_rmse = _rmse(ref, e), _rmse(ref, c)
        multiplier = 3.0 if e.dtype in _HALF or e.numel() < 1000 else 2.0   # small tensors: noise dominates
        accepted = compiled_rmse <= multiplier * eager_rmse + tol / 10.0
        return accepted, (f"RMSE from float64: compiled {compiled_rmse:.3g} {'<=' if accepted else '>'} "
                          f"{multiplier:g} x eager {eager_rmse:.3g} + {tol / 10.0:g}")

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
                    atol: Optional[float] = None, reference: Optional[Callable[[], Sequence]] = None) -> Agreement:
    """Compare the outputs of each call (eager[i] vs compiled[i]); the first problem is reported.

    reference: gives the float64 outputs of the same calls (raising NoReference, or any error, when it cannot);
    called only when a floating-point leaf is outside allclose and the example set no rtol/atol of its own."""
    diff = _run(_Diff(rtol, atol), eager, compiled)
    if diff.float_failures and reference is not None and rtol is None and atol is None:
        try:
            ref, why = list(reference()), ""
        except Exception as e:          # noqa: BLE001 - user code in float64 may fail in any way
            said = str(e) if isinstance(e, NoReference) else f"{type(e).__name__}: {e}"
            ref, why = [], (said.strip().splitlines() or [""])[0][:200]
        diff = _run(_Diff(rtol, atol, against_float64=True, no_reference=why), eager, compiled, ref)
    if diff.problems:
        where, what = diff.problems[0]
        more = f" (and {len(diff.problems) - 1} more)" if len(diff.problems) > 1 else ""
        return Agreement("mismatch", diff.max_abs, where, what + more)
    max_abs = diff.max_abs if diff.max_abs is not None else 0.0
    if diff.accepted:
        where, figures = diff.accepted[0]
        more = f" (and {len(diff.accepted) - 1} more outputs)" if len(diff.accepted) > 1 else ""
        return Agreement("match", max_abs, where, f"outside allclose, accepted by the float64 reference: {figures}{more}")
    return Agreement("match", max_abs)


def _run(diff: _Diff, eager: Sequence, compiled: Sequence, ref: Optional[Sequence] = None) -> _Diff:
    for i, (e, c) in enumerate(zip(eager, compiled)):
        diff.compare(e, c, f"call {i}: out", ref[i] if ref is not None and i < len(ref) else _MISSING)
    return diff


def _rmse(ref: torch.Tensor, x: torch.Tensor) -> float:
    return float(torch.sqrt(torch.mean(torch.square(ref - x.to(torch.float64)))))


def _child(ref, key):
    """The reference's value at `key` (an index, a dict key, a field), or _MISSING."""
    if isinstance(ref, dict):
        return ref.get(key, _MISSING)
    if isinstance(ref, (list, tuple)) and isinstance(key, int) and key < len(ref):
        return ref[key]
    return _MISSING


def _is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(value, "_fields")


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
