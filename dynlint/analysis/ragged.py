"""Tensors whose size depends on their values, handed to a frame Dynamo compiles on its own.

A function that code Dynamo runs eagerly calls (a function it skips: a graph break inside a loop) is entered as
a frame of its own at every call, guarded on its tensor arguments' sizes. A size that depends on the data (rows
kept by a boolean mask, `torch.where(cond)`, `nonzero()`, `unique()`, or indexing by such a tensor) differs
from entry to entry: the first new size compiles the frame again with that size dynamic, and because Dynamo's
dynamic sizes assume a value of at least 2, an entry where the selection keeps 0 or 1 rows fails the guard
`2 <= x.size()[0]` and compiles it once more. Dynamo installs that guard where the frame first works with the
tensor (an operation on it, not a call that passes it on into an inlined function: there, the callee's first
operation on it). The first recompile, on a new size, names no line (Dynamo's log names the frame): DYN509 reports
it at the frame's `def`, with the `2 <= x.size()[0]` guard as its related location: that one fails only where
the data leave 0 or 1 rows. Measured on torch 2.13 (tests/test_ragged_sizes.py; bench/guard_probes.py "frame
data-dependent size").
"""
from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional, Tuple, Union

# torch functions and tensor methods whose result has as many rows as the values select
RAGGED_CALLS = frozenset({"nonzero", "argwhere", "unique", "unique_consecutive", "masked_select"})
# tensor methods that keep the rows of their receiver
KEEP_ROWS = frozenset({"long", "float", "int", "half", "double", "bool", "to", "type_as", "clone", "detach",
                       "contiguous", "cpu", "cuda"})


def _mask(expr: ast.expr, bound: Dict[str, List[ast.expr]], seen: frozenset) -> bool:
    """A boolean tensor by construction: a comparison, `&`/`|`/`~` of them, or a local bound only to those."""
    if isinstance(expr, ast.Compare):
        return True
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.BitAnd, ast.BitOr)):
        return _mask(expr.left, bound, seen) or _mask(expr.right, bound, seen)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Invert):
        return _mask(expr.operand, bound, seen)
    if isinstance(expr, ast.Name) and expr.id not in seen and bound.get(expr.id):
        return all(_mask(v, bound, seen | {expr.id}) for v in bound[expr.id])
    return False


def ragged(expr: ast.expr, bound: Dict[str, List[ast.expr]], qualify: Callable[[str], str],
           seen: frozenset = frozenset()) -> bool:
    """Does `expr` (in a function whose locals are bound to `bound`'s values) have a first dimension whose size
    depends on tensor values? A local counts when any of its assignments does (a loop's `order = order[1:][keep]`
    after `order = scores.argsort()`)."""
    if isinstance(expr, ast.Name):
        if expr.id in seen or len(seen) > 6:
            return False
        return any(ragged(v, bound, qualify, seen | {expr.id}) for v in bound.get(expr.id, ()))
    if isinstance(expr, ast.BinOp):
        return ragged(expr.left, bound, qualify, seen) or ragged(expr.right, bound, qualify, seen)
    if isinstance(expr, ast.Subscript):
        index = expr.slice.elts[0] if isinstance(expr.slice, ast.Tuple) and expr.slice.elts else expr.slice
        if isinstance(index, ast.Slice):          # rows of a ragged tensor: `order[1:]`
            return ragged(expr.value, bound, qualify, seen)
        if _mask(index, bound, seen) or ragged(index, bound, qualify, seen):
            return True                           # `x[keep]`, `rois[idx]`
        # an element of what `torch.where(cond)` / `nonzero(as_tuple=True)` returns: one index tensor per dim
        return isinstance(index, ast.Constant) and isinstance(expr.value, ast.Call) and _selects(expr.value, qualify)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        name = qualify(_dotted(expr.func))
        if name.startswith("torch.") and expr.func.attr in RAGGED_CALLS:
            return True
        receiver = expr.func.value
        if expr.func.attr in RAGGED_CALLS and not name.startswith("torch.") and not _as_tuple(expr):
            return True                           # `x.nonzero()`
        return expr.func.attr in KEEP_ROWS and ragged(receiver, bound, qualify, seen)
    return False


def _selects(call: ast.Call, qualify: Callable[[str], str]) -> bool:
    """`torch.where(cond)` (one argument) or `nonzero(as_tuple=True)`: a tuple of index tensors."""
    if not isinstance(call.func, ast.Attribute):
        return False
    if call.func.attr == "where" and qualify(_dotted(call.func)) == "torch.where":
        return len(call.args) == 1 and not call.keywords
    return call.func.attr == "nonzero" and _as_tuple(call)


def _as_tuple(call: ast.Call) -> bool:
    return any(k.arg == "as_tuple" and isinstance(k.value, ast.Constant) and k.value.value for k in call.keywords)


def _dotted(node: ast.expr) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    parts.append(node.id if isinstance(node, ast.Name) else "?")
    return ".".join(reversed(parts))


def first_read(fdef: ast.AST, param: str) -> Tuple[Optional[ast.Name], Optional[ast.Call], Union[int, str, None]]:
    """The first read of `param` in `fdef`'s own body (source order), and when that read only passes it on as an
    argument of a call, the call and the argument's position or keyword."""
    parents: Dict[int, ast.AST] = {}
    reads = []
    stack = list(ast.iter_child_nodes(fdef))
    for node in ast.iter_child_nodes(fdef):
        parents[id(node)] = fdef
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)) or \
                node is getattr(fdef, "args", None):
            continue
        if isinstance(node, ast.Name) and node.id == param and isinstance(node.ctx, ast.Load):
            reads.append(node)
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
            stack.append(child)
    if not reads:
        return None, None, None
    first = min(reads, key=lambda n: (n.lineno, n.col_offset))
    parent = parents.get(id(first))
    if isinstance(parent, ast.Call) and first in parent.args:
        return first, parent, parent.args.index(first)
    if isinstance(parent, ast.keyword) and isinstance(parents.get(id(parent)), ast.Call):
        return first, parents[id(parent)], parent.arg
    return first, None, None
