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
the data leave 0 or 1 rows. Where the rows come from a loop that runs a tensor down (`while order.numel() > 0:`
... `order = order[1:][keep]`, ending only when it is empty or has one row left) and the frame gets a slice of it
past its first row, the entries take every size the loop leaves, down to one row when two are left: that guard
fails in an ordinary run, and is a finding of its own (`runs_down`). Measured on torch 2.13
(tests/test_ragged_sizes.py; bench/guard_probes.py "frame data-dependent size").
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


def _size_query(expr: ast.expr) -> Optional[str]:
    """The tensor whose row count `expr` asks: `x.numel()`, `x.nelement()`, `len(x)`, `x.shape[0]`, `x.size(0)`,
    `x.size()[0]`, or a comparison of one of those with a constant."""
    if isinstance(expr, ast.Compare) and len(expr.comparators) == 1 and isinstance(expr.comparators[0], ast.Constant):
        expr = expr.left
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and \
            expr.func.attr in ("numel", "nelement", "size") and isinstance(expr.func.value, ast.Name):
        return expr.func.value.id
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "len" and \
            len(expr.args) == 1 and isinstance(expr.args[0], ast.Name):
        return expr.args[0].id
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) and expr.slice.value == 0:
        inner = expr.value
        if isinstance(inner, ast.Call):
            inner = inner.func      # `x.size()[0]`
        if isinstance(inner, ast.Attribute) and inner.attr in ("shape", "size") and isinstance(inner.value, ast.Name):
            return inner.value.id
    return None


def _past_first(expr: ast.AST, name: str) -> bool:
    """Does `expr` hold `name[1:]` (the rows of `name` past its first)?"""
    return any(isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == name and
               isinstance(n.slice, ast.Slice) and n.slice.upper is None and n.slice.step is None and
               isinstance(n.slice.lower, ast.Constant) and n.slice.lower.value == 1 for n in ast.walk(expr))


def _own_statements(loop: ast.While):
    """The statements of a loop's body, not those of loops or functions nested in it."""
    stack = list(loop.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.For, ast.While, ast.AsyncFor, ast.FunctionDef, ast.AsyncFunctionDef,
                                 ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def runs_down(fdef: ast.AST, call: ast.Call, arg: ast.expr) -> bool:
    """Is `arg` of `call` the rows past the first of a tensor that a `while` loop around the call runs down to
    (nearly) empty? The loop runs while the tensor has rows, drops at least its first row each iteration
    (`x = x[1:][keep]`), and leaves early only once a test of its row count says so (no `return`, no other
    `break`): the frame's entries then have every row count the loop leaves, one when two rows are left."""
    for loop in (n for n in ast.walk(fdef) if isinstance(n, ast.While)):
        name = _size_query(loop.test)
        if name is None or not _past_first(arg, name) or \
                not any(n is call for stmt in loop.body for n in ast.walk(stmt)):
            continue
        own = list(_own_statements(loop))
        shrinks = any(isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)
                      and _past_first(n.value, name) for n in own)
        # each `break` stands alone in the body of an `if` that tests the tensor's row count
        sized_exits = [b for n in own if isinstance(n, ast.If) and _size_query(n.test) == name
                       for b in n.body if isinstance(b, ast.Break)]
        breaks = [n for n in own if isinstance(n, ast.Break)]
        exits_early = any(isinstance(n, ast.Return) for n in own) or \
            any(not any(b is s for s in sized_exits) for b in breaks)
        if shrinks and not exits_early:
            return True
    return False
