"""What every fix builder shares: the `Autofix` it returns, how `torch` is spelt in this file, expressions
built from templates, and the statements a fix may replace.

A rule's `autofix(node)` returns an `Autofix`: libcst nodes of the code being checked and what replaces them.
The walker turns it into file edits (dynlint/linter/walker.py `render_fix`) and the fixer applies them to the
whole file (dynlint/linter/fixer.py), which knows nothing of torch.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

import libcst as cst
from libcst.helpers import parse_template_expression

from dynlint.analysis.conditions import any_all
from dynlint.analysis.tensors.inference import Tensors
from dynlint.analysis.tensors.kinds import TENSOR
from dynlint.linter.finding import Edit

SAFE, UNSAFE = "safe", "unsafe"


@dataclass(frozen=True)
class Autofix:
    title: str
    safety: str                                          # SAFE | UNSAFE
    edits: Tuple[Tuple[cst.CSTNode, object], ...]       # (node of the unit, replacement node or [statements])
    imports: Tuple[Tuple[str, str], ...] = ()
    file_edits: Tuple[Edit, ...] = ()                    # edits outside the unit, in file coordinates


# ---- names -------------------------------------------------------------------------------------------------
def torch_name(ctx) -> str:
    """How this file spells the `torch` module (`import torch as th` -> "th"); "torch" when nothing binds it
    (the fix then asks the fixer to add `import torch`)."""
    imports = getattr(ctx.index, "imports", None) or {}
    if imports.get("torch") == "torch":
        return "torch"
    return next((local for local, target in sorted(imports.items()) if target == "torch"), "torch")


def torch_imports(ctx) -> Tuple[Tuple[str, str], ...]:
    return (("torch", torch_name(ctx)),)


def code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def expr(template: str, **parts: cst.BaseExpression) -> cst.BaseExpression:
    """`expr("{t}.where({c}, {a}, {b})", t=..., ...)`: parts may be nodes or source text."""
    nodes = {k: cst.parse_expression(v) if isinstance(v, str) else strip_parens(v) for k, v in parts.items()}
    return parse_template_expression(template, **nodes)


def strip_parens(node: cst.BaseExpression) -> cst.BaseExpression:
    """Without its own parentheses, for use as a call argument (a tuple or generator keeps them)."""
    if not getattr(node, "lpar", None) or isinstance(node, (cst.Tuple, cst.GeneratorExp, cst.Yield)):
        return node
    return node.with_changes(lpar=(), rpar=())


def atom(node: cst.BaseExpression) -> cst.BaseExpression:
    """`node`, parenthesised where it is the receiver of a method call (`(a + b).float()`, `(1).float()`)."""
    if isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString)) or \
            getattr(node, "lpar", None):
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def is_compiling_test(t: str, negated: bool) -> cst.BaseExpression:
    return cst.parse_expression(f"{'not ' if negated else ''}{t}.compiler.is_compiling()")


# ---- statements --------------------------------------------------------------------------------------------
def statement_parent_ok(parents: Sequence[cst.CSTNode], index: int) -> bool:
    """parents[index] is a statement of an indented block or of the module (not an `elif`)."""
    return index >= 1 and isinstance(parents[index - 1], (cst.IndentedBlock, cst.Module))


# ---- numbers and tensor conditions -------------------------------------------------------------------------
def number(node: cst.CSTNode) -> bool:
    """A numeric literal, signed or not (`2`, `-0.5`), or `float("inf")` / `float("nan")`."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return number(node.expression)
    # float("inf"), float("-inf"), float("nan")
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "float" and \
        len(node.args) == 1 and isinstance(node.args[0].value, cst.SimpleString)


def bool_tensor(ctx, cond: cst.BaseExpression, t: str) -> Optional[cst.BaseExpression]:
    """A boolean-tensor expression with the truth value Python gives `cond` (`not a` -> `torch.logical_not(a)`,
    `a and b` -> `torch.logical_and(a, b)`, `y.sum()` -> `y.sum().bool()`); None when a part is not a tensor."""
    tensors = Tensors.of(ctx)
    if isinstance(cond, cst.UnaryOperation) and isinstance(cond.operator, cst.Not):
        inner = bool_tensor(ctx, cond.expression, t)
        return expr(f"{t}.logical_not({{a}})", a=inner) if inner is not None else None
    if isinstance(cond, cst.BooleanOperation):
        left, right = bool_tensor(ctx, cond.left, t), bool_tensor(ctx, cond.right, t)
        if left is None or right is None:
            return None
        fn = "logical_and" if isinstance(cond.operator, cst.And) else "logical_or"
        return expr(f"{t}.{fn}({{a}}, {{b}})", a=left, b=right)
    if tensors.kind(cond) != TENSOR:
        return None
    if tensors.is_bool(cond) or any_all(ctx, cond):
        return strip_parens(cond)
    return cst.Call(func=cst.Attribute(value=atom(cond), attr=cst.Name("bool")))
