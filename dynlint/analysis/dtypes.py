"""What simple elementwise arithmetic on a tensor does to its dtype: does `x * 0.5` or `x / 2` turn an integer
tensor into a float one, and do the two arms of a branch end with one dtype?"""
from __future__ import annotations

import libcst as cst

from dynlint.analysis.tensors.inference import Tensors
from dynlint.analysis.tensors.kinds import FLOAT_IF_TENSOR
from dynlint.analysis.tensors.syntax import float_literal

CLAMPS = frozenset({"clamp", "clip", "clamp_min", "clamp_max"})
KEEPS, INTEGER_ARITHMETIC, BRINGS_FLOAT = 0, 1, 2


def promotion(ctx, arm: cst.CSTNode) -> int:
    """What a simple arm (`fixes.where.simple_arm`) does to its tensor's dtype: BRINGS_FLOAT with a float operand, a true
    division or a float bound of `clamp` (an integer tensor becomes float); INTEGER_ARITHMETIC with arithmetic
    on integers only, `square` included (a boolean tensor becomes int64); else KEEPS (`abs`, `zeros_like`, and
    the fill values of `nan_to_num` and `full_like`, which take the tensor's dtype)."""
    if isinstance(arm, cst.BinaryOperation):
        if isinstance(arm.operator, cst.Divide):
            return BRINGS_FLOAT
        return max([INTEGER_ARITHMETIC] + [BRINGS_FLOAT if float_literal(side) else promotion(ctx, side)
                                           for side in (arm.left, arm.right)])
    if isinstance(arm, cst.UnaryOperation):
        return promotion(ctx, arm.expression)
    if isinstance(arm, cst.Call):
        values = [a.value for a in arm.args]
        q = ctx.qualify(arm.func) or ""
        if isinstance(arm.func, cst.Attribute) and not q.startswith("torch."):
            fn, tensor, rest = arm.func.attr.value, arm.func.value, values
        else:
            fn, tensor, rest = q.rsplit(".", 1)[-1], (values[0] if values else None), values[1:]
        inner = promotion(ctx, tensor) if tensor is not None else KEEPS
        if fn in CLAMPS and any(float_literal(v) for v in rest):
            return BRINGS_FLOAT
        return max(inner, INTEGER_ARITHMETIC) if fn == "square" else inner
    return KEEPS


def same_dtype(ctx, a: cst.CSTNode, b: cst.CSTNode, base: str) -> bool:
    """Simple arms `a` and `b` of `base` have one dtype: both or neither bring in a float, and both or neither
    do integer arithmetic where `base` is a boolean mask; or `base` is known to be floating (`Tensors.floating`:
    then every arm keeps its dtype, a float number included). (`torch.where` of an integer and a float tensor is
    float: `x if c else x * 0.5` would turn an integer `x` into a float one.)"""
    pa, pb = promotion(ctx, a), promotion(ctx, b)
    if pa == pb or Tensors.of(ctx).floating(cst.Name(base)) >= FLOAT_IF_TENSOR:
        return True
    return max(pa, pb) < BRINGS_FLOAT and not Tensors.of(ctx).is_bool(cst.Name(base))

