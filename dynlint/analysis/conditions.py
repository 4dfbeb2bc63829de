"""Tensor conditions: is a condition provably a 0-d tensor (`x.any()`, `y.sum() > 0`), is it a boolean one
(`torch.any(t)`)? A branch on such a condition can become a `torch.where` or an in-graph assertion."""
from __future__ import annotations

import libcst as cst

from dynlint.analysis.tensors.inference import Tensors
from dynlint.analysis.tensors.kinds import TENSOR, VALUE, WEAK

ELEMENTWISE = frozenset({"isnan", "isinf", "isfinite", "isposinf", "isneginf", "logical_not", "abs", "neg", "bool",
                         "float", "double", "half", "long", "int", "sign", "signbit", "sqrt", "exp", "log",
                         "clone", "detach", "nan_to_num", "clamp", "clip", "round", "floor", "ceil"})


def zero_dim(ctx, node: cst.CSTNode, depth: int = 0) -> bool:
    """`node` is provably a 0-d tensor (or a comparison / logic of 0-d tensors and numbers): `x.any()`,
    `y.sum() > 0`, `torch.isfinite(loss.mean())`."""
    tensors = Tensors.of(ctx)
    if depth > 8:
        return False
    if tensors.is_scalar(node):
        return True
    if isinstance(node, cst.Call):
        return _zero_dim_call(ctx, tensors, node, depth)
    if isinstance(node, (cst.Comparison, cst.BinaryOperation)):
        sides = [node.left] + ([c.comparator for c in node.comparisons] if isinstance(node, cst.Comparison)
                               else [node.right])
        flags = [zero_dim(ctx, s, depth + 1) for s in sides]
        return any(flags) and all(f or tensors.kind(s) == VALUE for f, s in zip(flags, sides))
    if isinstance(node, cst.UnaryOperation):
        return zero_dim(ctx, node.expression, depth + 1)
    if isinstance(node, cst.BooleanOperation):
        return zero_dim(ctx, node.left, depth + 1) and zero_dim(ctx, node.right, depth + 1)
    if isinstance(node, cst.Name):
        values = tensors.assigned_values(node.value)
        return bool(values) and all(zero_dim(ctx, v, depth + 1) for v in values)
    return False


def _zero_dim_call(ctx, tensors: Tensors, node: cst.Call, depth: int) -> bool:
    """`t.any()`, `torch.all(t)`, or an elementwise function or method of a 0-d tensor."""
    q = ctx.qualify(node.func) or ""
    positional = [a.value for a in node.args if a.keyword is None and not a.star]
    if isinstance(node.func, cst.Attribute) and not q.startswith("torch."):
        m, recv = node.func.attr.value, node.func.value
        if m in ("any", "all") and not node.args and tensors.kind(recv) in (TENSOR, WEAK):
            return True
        return m in ELEMENTWISE and zero_dim(ctx, recv, depth + 1)
    if q.startswith("torch.") and q[6:] in ("any", "all") and len(node.args) == 1:
        return True
    return q.startswith("torch.") and q[6:] in ELEMENTWISE and bool(positional) and \
        zero_dim(ctx, positional[0], depth + 1)


def any_all(ctx, node: cst.CSTNode) -> bool:
    """`t.any()`, `t.all(dim=...)`, `torch.any(t)`: boolean tensors."""
    if not isinstance(node, cst.Call):
        return False
    q = ctx.qualify(node.func) or ""
    if q in ("torch.any", "torch.all"):
        return True
    return isinstance(node.func, cst.Attribute) and node.func.attr.value in ("any", "all") and \
        not q.startswith("torch.")          # called on a tensor condition: bool_tensor checked it is one

