"""Scalars kept as 0-d tensors: drop `t.item()` / `float(t)` where the value only feeds tensor arithmetic, so
Dynamo need not pull it out of the graph."""
from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from dynlint.analysis.aliasing import occurrences, parent_map
from dynlint.analysis.tensors.inference import Tensors
from dynlint.analysis.tensors.kinds import TENSOR, VALUE
from dynlint.fixes.common import SAFE, UNSAFE, Autofix, number

ARITH_OPS = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power)


def tensor_arithmetic_use(ctx, use: cst.CSTNode, parent_of) -> bool:
    """`use` (a scalar pulled out of a tensor) only meets tensors through arithmetic: climbing through
    arithmetic with numbers, unary minus and `abs()`, it reaches an operator or comparison whose other side is a
    tensor. Keeping it a 0-d tensor then gives the same values: 0-d tensors promote like Python numbers."""
    tensors = Tensors.of(ctx)
    operand = use
    for _ in range(32):
        p = parent_of.get(id(operand))
        if isinstance(p, cst.BinaryOperation) and isinstance(p.operator, ARITH_OPS):
            other = p.right if p.left is operand else p.left
            if tensors.kind(other) == TENSOR:
                return True
            if not (number(other) or tensors.kind(other) == VALUE):
                return False
            operand = p
        elif isinstance(p, cst.UnaryOperation) and isinstance(p.operator, (cst.Minus, cst.Plus)):
            operand = p
        elif isinstance(p, (cst.Comparison, cst.ComparisonTarget)):
            cmp = p if isinstance(p, cst.Comparison) else parent_of.get(id(p))
            if not isinstance(cmp, cst.Comparison) or len(cmp.comparisons) != 1 or \
                    isinstance(cmp.comparisons[0].operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)):
                return False
            other = cmp.comparisons[0].comparator if cmp.left is operand else cmp.left
            return tensors.kind(other) == TENSOR
        elif isinstance(p, cst.Arg) and p.keyword is None and not p.star:
            call = parent_of.get(id(p))
            if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and
                    ctx.qualify(call.func) == "abs" and len(call.args) == 1):
                return False
            operand = call
        else:
            return False
    return False


def returned(use: cst.CSTNode, parent_of) -> bool:
    """`use` is returned (`return v`, `return a, v`)."""
    p = parent_of.get(id(use))
    if isinstance(p, cst.Element):
        p = parent_of.get(id(parent_of.get(id(p))))
    return isinstance(p, cst.Return)


def name_uses(fn: cst.CSTNode, name: str) -> Tuple[List[cst.Name], bool]:
    """(loads of the local `name` in `fn`, whether a nested function, lambda or class mentions it, or a
    `global` / `nonlocal` declares it)."""
    uses, nested = occurrences(fn, name)
    return [u for u, _ in uses if isinstance(u, cst.Name)], nested


def clamp_use(ctx, use: cst.Name, parent_of, floats_ok: bool):
    """`max(v, c)` / `min(v, c)` (c a number) whose result only feeds tensor arithmetic: the call, rewritten as
    `v.clamp(min=c)` / `v.clamp(max=c)` for a 0-d tensor `v`; None otherwise. A float `c` only where `v` is a
    floating value (`clamp` of an integer tensor by a float bound gives a float)."""
    arg = parent_of.get(id(use))
    call = parent_of.get(id(arg))
    if not (isinstance(arg, cst.Arg) and isinstance(call, cst.Call) and isinstance(call.func, cst.Name)
            and call.func.value in ("max", "min") and ctx.qualify(call.func) in ("max", "min")
            and len(call.args) == 2 and all(a.keyword is None and not a.star for a in call.args)):
        return None
    other = call.args[1].value if call.args[0] is arg else call.args[0].value
    if not number(other) or (not floats_ok and not isinstance(other, cst.Integer)):
        return None
    if not tensor_arithmetic_use(ctx, call, parent_of):
        return None
    bound = "min" if call.func.value == "max" else "max"
    new = cst.Call(func=cst.Attribute(value=cst.Name(use.value), attr=cst.Name("clamp")),
                   args=[cst.Arg(other, keyword=cst.Name(bound), equal=cst.AssignEqual(
                       whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))])
    return call, new.with_changes(lpar=call.lpar, rpar=call.rpar)


def keep_scalar_tensor(ctx, call: cst.Call, replacement: cst.BaseExpression, what: str, value: cst.BaseExpression,
                       floats_ok: bool = False) -> Optional[Autofix]:
    """Drop a scalar extraction (`t.item()`, `float(t)`) of the tensor `value` where the value only feeds tensor
    arithmetic: either directly (`x / t.max().item()`) or through a local assigned once (`peak = ...item()`;
    `x / peak`, also `x / max(peak, 1)`, which becomes `x / peak.clamp(min=1)`). Safe then; unsafe when the local
    is also returned (the caller gets a 0-d tensor instead of a Python number), or when `value` is a tensor only
    by the guess that `forward`'s parameters are (`Tensors.strict_of`: `int(n).long()` of an int would raise).
    `floats_ok`: the value is known to be a float (a float bound in `max(v, 0.5)` keeps its type)."""
    fn = next((f for f in reversed(ctx.functions) if isinstance(f, cst.FunctionDef)), None)
    if fn is None:
        return None
    sure = Tensors.strict_of(ctx).kind(value) == TENSOR
    parents = parent_map(fn)
    title = f"Keep the value as a 0-d tensor ({what})"
    owner = ctx.parent()
    if isinstance(owner, cst.Assign) and owner.value is call:
        if len(owner.targets) != 1 or not isinstance(owner.targets[0].target, cst.Name):
            return None
        name = owner.targets[0].target.value
        values = Tensors.of(ctx).assigned_values(name)
        if len(values) != 1 or values[0] is not call:
            return None                 # assigned more than once, or a parameter too
        uses, nested = name_uses(fn, name)
        if nested or not uses:
            return None
        edits = [(call, replacement)]
        safe = True
        for u in uses:
            if tensor_arithmetic_use(ctx, u, parents):
                continue
            clamp = clamp_use(ctx, u, parents, floats_ok)
            if clamp is not None:
                edits.append(clamp)
            elif returned(u, parents):
                safe = False
            else:
                return None
        return Autofix(title, SAFE if safe and sure else UNSAFE, tuple(edits))
    if tensor_arithmetic_use(ctx, call, parents):
        return Autofix(title, SAFE if sure else UNSAFE, ((call, replacement),))
    return None
