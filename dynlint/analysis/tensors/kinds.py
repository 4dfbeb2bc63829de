"""The vocabulary of the tensor analysis: what an expression is known to be.

* TENSOR  — produced by torch functions, tensor methods, arithmetic on tensors, `forward`'s tensor
            parameters, `self.<parameter/buffer>`, submodule outputs;
* VALUE   — known not to be a tensor: literals, shapes/sizes/dtypes/devices, `len()`, `self.training`,
            `is None` checks, config attributes;
* WEAK    — probably a tensor (an unannotated parameter of a traced helper): its tensor-only methods
            (`x.sum()`, `x.max()`) count as direct evidence, the bare name does not;
* TENSORS — a list or tuple whose elements are tensors (`[a, b]` of tensors, `[f(t) for t in xs]`, a parameter
            annotated `List[Tensor]` / `Tuple[Tensor, ...]`): not a tensor itself, but its elements are (what
            iterating, indexing and unpacking it give);
* UNKNOWN — anything else. Rules fire on TENSOR only: a false warning costs more than a missed one.

Floating point, a second scale (`Tensors.floating`): FLOAT_TENSOR (a floating-point tensor), FLOAT_IF_TENSOR
(never a tensor of another dtype) and NOT_FLOAT (not known).
"""
from __future__ import annotations

from typing import Iterable

TENSOR, VALUE, WEAK, UNKNOWN, TENSORS = "tensor", "value", "weak", "unknown", "tensors"
FLOAT_TENSOR, FLOAT_IF_TENSOR, NOT_FLOAT = 2, 1, 0


def combine(a: str, b: str) -> str:
    if a == b:
        return a
    if {a, b} == {TENSOR, WEAK}:
        return WEAK
    return UNKNOWN


def combined(kinds: Iterable[str]) -> str:
    """`combine` over all of `kinds` (at least one)."""
    it = iter(kinds)
    result = next(it)
    for k in it:
        result = combine(result, k)
    return result


def merge(a: str, b: str) -> str:
    """Kind of `a <op> b`: a tensor if either side is one."""
    if TENSOR in (a, b):
        return TENSOR
    if WEAK in (a, b):
        return WEAK
    return VALUE if a == b == VALUE else UNKNOWN
