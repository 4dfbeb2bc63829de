"""Branches on a 0-d tensor condition as one `torch.where` (or `torch.cond`): an assignment in an `if`, a
conditional expression, an early return. `where_is_safe` is the one test of safety they share."""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import libcst as cst

from dynlint.analysis.aliasing import VIEWS, handed_on, may_alias, name_escapes, nodes, parent_map, value_before
from dynlint.analysis.conditions import zero_dim
from dynlint.analysis.dtypes import same_dtype
from dynlint.analysis.purity import is_pure
from dynlint.analysis.tensors.inference import Tensors
from dynlint.analysis.tensors.kinds import FLOAT_TENSOR, TENSOR, WEAK
from dynlint.fixes.common import (
    SAFE,
    UNSAFE,
    Autofix,
    atom,
    bool_tensor,
    code,
    expr,
    is_compiling_test,
    number,
    statement_parent_ok,
    torch_imports,
    torch_name,
)
from dynlint.fixes.guards import is_eager_only_block

SHAPE_KEEPING_METHODS = frozenset({"nan_to_num", "clamp", "clip", "clamp_min", "clamp_max", "abs", "neg", "relu",
                                   "clone", "detach", "contiguous", "square"})
SHAPE_KEEPING_FUNCS = frozenset({"nan_to_num", "clamp", "clip", "clamp_min", "clamp_max", "abs", "neg", "relu",
                                 "zeros_like", "ones_like", "full_like", "square"})
ARITH = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)


def _finite_number(node: cst.CSTNode, nonzero: bool = False) -> bool:
    """A finite numeric literal (`2`, `-0.5`, `1e-6`), nonzero if asked."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return _finite_number(node.expression, nonzero)
    if isinstance(node, (cst.Integer, cst.Float)):
        try:
            return not nonzero or float(node.evaluated_value) != 0
        except (ValueError, OverflowError):
            return False
    return False


def simple_arm(ctx, node: cst.CSTNode, base: str) -> bool:
    """`node` keeps the shape of the tensor named `base` and is computed from it elementwise with numbers
    only: `base`, `base * 0.5`, `base + 1e-6`, `base.nan_to_num()`, `torch.clamp(base, min=0)`,
    `torch.zeros_like(base)`. Its derivative is finite everywhere (no `1 / base`, no `base * inf`): the arm
    torch.where does not select still gets a zero gradient, and 0 * inf would make that gradient NaN."""
    if isinstance(node, cst.Name):
        return node.value == base
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, ARITH):
        l, r = node.left, node.right
        if isinstance(node.operator, cst.Divide):
            return simple_arm(ctx, l, base) and _finite_number(r, nonzero=True)
        numeric = _finite_number if isinstance(node.operator, cst.Multiply) else number
        return (simple_arm(ctx, l, base) and (numeric(r) or simple_arm(ctx, r, base))) or \
            (numeric(l) and simple_arm(ctx, r, base))
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return simple_arm(ctx, node.expression, base)
    if isinstance(node, cst.Call):
        rest = [a.value for a in node.args]
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in SHAPE_KEEPING_METHODS and \
                not (ctx.qualify(node.func) or "").startswith("torch."):
            return simple_arm(ctx, node.func.value, base) and all(number(a) for a in rest)
        q = ctx.qualify(node.func) or ""
        if q.startswith("torch.") and q[6:] in SHAPE_KEEPING_FUNCS and rest:
            return simple_arm(ctx, rest[0], base) and all(number(a) for a in rest[1:]) and \
                all(not a.star for a in node.args)
    return False


def _assignment(stmt: cst.CSTNode) -> Optional[Tuple[str, cst.BaseExpression, cst.SimpleStatementLine]]:
    """(name, value, line) for a line `name = value` or `name op= value` (as `name = name op value`)."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    s = stmt.body[0]
    if isinstance(s, cst.Assign) and len(s.targets) == 1 and isinstance(s.targets[0].target, cst.Name):
        return s.targets[0].target.value, s.value, stmt
    if isinstance(s, cst.AugAssign) and isinstance(s.target, cst.Name) and \
            isinstance(s.operator, (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign)):
        op = {cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
              cst.DivideAssign: cst.Divide}[type(s.operator)]()
        return s.target.value, cst.BinaryOperation(left=s.target, operator=op, right=atom(s.value)), stmt
    return None


def branch_to_where(ctx, if_node: cst.If, cond: cst.BaseExpression, parents_index: int) -> Optional[Autofix]:
    """`if cond: name = a [else: name = b]` -> `name = torch.where(cond, a, b)` (b defaults to `name`).
    Statements of the arms that only run eagerly (`if not torch.compiler.is_compiling(): ...`) are kept, under
    one eager-only `if cond:` placed before. Safe under `where_is_safe` (a 0-d condition; both arms elementwise
    functions of the tensor `name` with numbers, of one dtype; a new tensor in `name` that the caller cannot
    tell from the one it held), and when no arm updates in place (`name += v`) a tensor seen elsewhere;
    otherwise unsafe."""
    tensors = Tensors.of(ctx)
    if not statement_parent_ok(ctx.parents, parents_index) or not isinstance(if_node.body, cst.IndentedBlock):
        return None
    if if_node.orelse is not None and not isinstance(if_node.orelse, cst.Else):
        return None                     # elif chains: not handled
    arms = [if_node.body] + ([if_node.orelse.body] if if_node.orelse is not None else [])
    eager: List[List[cst.BaseStatement]] = []
    assigns = []
    for arm in arms:
        if not isinstance(arm, cst.IndentedBlock):
            return None
        kept, found = [], []
        for stmt in arm.body:
            if is_eager_only_block(stmt, ctx) and not found:     # eager-only output before the assignment
                kept.append(stmt)
            else:
                found.append(stmt)
        if len(found) != 1 or _assignment(found[0]) is None:
            return None
        eager.append(kept)
        assigns.append(_assignment(found[0]))
    name = assigns[0][0]
    if any(a[0] != name for a in assigns):
        return None
    t = torch_name(ctx)
    test = bool_tensor(ctx, cond, t)
    if test is None or not is_pure(ctx, cond):
        return None
    taken = assigns[0][1]
    other = assigns[1][1] if len(assigns) == 2 else cst.Name(name)
    if len(assigns) == 1 and tensors.kind(cst.Name(name)) not in (TENSOR, WEAK):
        return None                     # `name` must already hold a tensor when the branch is not taken
    if not all(tensors.kind(v) in (TENSOR, WEAK) or simple_arm(ctx, v, name) for v in (taken, other)):
        return None
    # the arm not taken handed on `name` as it was: the value it last got in this block, if known
    before = value_before(ctx.parents[parents_index - 1].body, if_node, name) if len(assigns) == 1 else None
    held = (taken, other if len(assigns) == 2 else before if before is not None else cst.Name(name))
    seen = name_escapes(ctx, name, if_node, ctx.parents[:parents_index], before=False)
    safe = where_is_safe(ctx, cond, taken, other, name, held, seen) and \
        not (any(_in_place(a[2]) for a in assigns) and _update_hidden(ctx, name, if_node, parents_index))
    if safe or all(is_pure(ctx, v) for v in (taken, other)):
        value = expr(f"{t}.where({{c}}, {{a}}, {{b}})", c=test, a=taken, b=other)
        title = f"Select with `{t}.where` instead of branching"
    elif zero_dim(ctx, cond):
        # arms that call user code (a submodule): run only the chosen one, in the graph, with torch.cond
        value = expr(f"{t}.cond({{c}}, lambda: {{a}}, lambda: {{b}})", c=test, a=_fresh(taken), b=_fresh(other))
        title = f"Branch inside the graph with `{t}.cond`"
    else:
        return None
    line = assigns[0][2]
    comment = line.trailing_whitespace if line.trailing_whitespace.comment else if_node.body.header
    new_line = cst.SimpleStatementLine(
        body=[cst.Assign(targets=[cst.AssignTarget(target=cst.Name(name))], value=value)],
        trailing_whitespace=comment)
    out: List[cst.BaseStatement] = []
    stmts = [[s for blk in arm for s in blk.body.body] for arm in eager] + [[]]
    if stmts[0] or stmts[1]:
        if stmts[0]:
            inner_if = cst.If(test=cond, body=cst.IndentedBlock(body=stmts[0]),
                              orelse=cst.Else(body=cst.IndentedBlock(body=stmts[1])) if stmts[1] else None)
        else:                           # only the else arm has eager-only output
            inner_if = cst.If(test=cst.UnaryOperation(operator=cst.Not(), expression=atom(cond)),
                              body=cst.IndentedBlock(body=stmts[1]))
        out.append(cst.If(test=is_compiling_test(t, True), body=cst.IndentedBlock(body=[inner_if])))
    out.append(new_line)
    return Autofix(title, SAFE if safe else UNSAFE, ((if_node, out),), torch_imports(ctx))


def _fresh(node: cst.BaseExpression) -> cst.BaseExpression:
    """A `torch.cond` branch may not return (a view of) one of its inputs: `.clone()` what could be one."""
    view = isinstance(node, (cst.Name, cst.Attribute, cst.Subscript)) or (
        isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in VIEWS)
    return cst.Call(func=cst.Attribute(value=atom(node), attr=cst.Name("clone"))) if view else node


def ifexp_to_where(ctx, node: cst.IfExp) -> Optional[Autofix]:
    """`a if cond else b` -> `torch.where(cond, a, b)`; safe under `where_is_safe` (both arms simple functions
    of one tensor, of one dtype; the new tensor not seen where the caller could tell it from `a` or `b`)."""
    tensors = Tensors.of(ctx)
    t = torch_name(ctx)
    test = bool_tensor(ctx, node.test, t)
    if test is None or not is_pure(ctx, node.test):
        return None
    a, b = node.body, node.orelse
    if tensors.kind(a) != TENSOR and tensors.kind(b) != TENSOR:
        return None
    bases = sorted(_names(a) | _names(b))
    simple = zero_dim(ctx, node.test) and any(simple_arm(ctx, a, n) and simple_arm(ctx, b, n) for n in bases)
    if not simple and not (is_pure(ctx, a) and is_pure(ctx, b) and tensors.kind(a) == tensors.kind(b) == TENSOR):
        return None
    fn = next((f for f in reversed(ctx.functions) if isinstance(f, cst.FunctionDef)), None)
    seen = fn is None or handed_on(ctx, node, parent_map(fn))
    safe = simple and any(where_is_safe(ctx, node.test, a, b, n, (a, b), seen) for n in bases)
    value = expr(f"{t}.where({{c}}, {{a}}, {{b}})", c=test, a=a, b=b)
    value = value.with_changes(lpar=node.lpar, rpar=node.rpar)
    return Autofix(f"Select with `{t}.where` instead of a conditional expression", SAFE if safe else UNSAFE,
                   ((node, value),), torch_imports(ctx))


def _return_value(stmt: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """The value of a line `return value` (None for anything else, a bare `return` included)."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Return):
        return stmt.body[0].value
    return None


def _eager_prefix(ctx, body: Sequence[cst.BaseStatement]):
    """(eager-only blocks at the start of `body`, the statements after them)."""
    body = list(body)
    n = 0
    while n < len(body) and is_eager_only_block(body[n], ctx):
        n += 1
    return body[:n], body[n:]


def early_return_to_where(ctx, if_node: cst.If, parents_index: int) -> Optional[Autofix]:
    """An early return on a tensor condition, as one `torch.where`:

        if cond:                      ->   return torch.where(cond, a, b)
            return a
        return b                      (also `else: return b`)

        if cond:                      ->   name = torch.where(cond, name, v)
            return e                       return e
        name = v
        return e                      (the same `e`: the early return skips only the update of `name`)

    Safe under the conditions of the branch fix (`where_is_safe`): the condition is a 0-d tensor, and the
    selected values are elementwise functions of one tensor with numbers (`y * 0.5`, `y.clamp(min=0)`; see
    `simple_arm`) of one dtype, so both computing them always and selecting keeps values, dtype, shape and
    gradients; and the caller cannot get back a tensor it holds (a parameter, an attribute, a view) where it
    used to (nor miss an in-place update, `y += v`, of one). Other side-effect-free tensor values
    give an unsafe fix, as does a fall-through with more statements before `return b` (they then always run:
    `if cond: return a`, `loss = f(...)`, `return loss` -> `loss = f(...)`, `return torch.where(cond, a,
    loss)`). Eager-only output in the `if` (`if not torch.compiler.is_compiling(): ...`) stays, under its own
    `if cond:`."""
    tensors = Tensors.of(ctx)
    parents = ctx.parents
    if not statement_parent_ok(parents, parents_index) or \
            not isinstance(parents[parents_index - 1], cst.IndentedBlock) or not isinstance(if_node.body, cst.IndentedBlock):
        return None
    eager, rest = _eager_prefix(ctx, if_node.body.body)
    if len(rest) != 1 or _return_value(rest[0]) is None:
        return None
    taken, taken_line = _return_value(rest[0]), rest[0]
    cond = if_node.test
    t = torch_name(ctx)
    test = bool_tensor(ctx, cond, t)
    if test is None or not is_pure(ctx, cond):
        return None
    block = parents[parents_index - 1].body
    at = next((i for i, s in enumerate(block) if s is if_node), None)
    if at is None:
        return None
    following = list(block[at + 1:])
    if isinstance(if_node.orelse, cst.Else):
        if not isinstance(if_node.orelse.body, cst.IndentedBlock) or len(if_node.orelse.body.body) != 1:
            return None
        following, consumed_from = [if_node.orelse.body.body[0]], False
    elif if_node.orelse is not None:
        return None                                         # elif chains: not handled
    else:
        consumed_from = True
    # the fall-through: assignments, then `return b`
    k = 0
    while k < len(following) and k < 6 and _assignment(following[k]) is not None:
        k += 1
    if k >= len(following) or _return_value(following[k]) is None:
        return None
    other, other_line = _return_value(following[k]), following[k]
    assigns = [_assignment(s) for s in following[:k]]
    kept: List[cst.BaseStatement] = []
    if eager:
        kept.append(cst.If(test=is_compiling_test(t, True), body=cst.IndentedBlock(body=[
            cst.If(test=cond, body=cst.IndentedBlock(body=[s for blk in eager for s in blk.body.body]))])))

    if k == 1 and code(taken).split() == code(other).split() and consumed_from:
        # `if cond: return e` / `name = v` / `return e`  ->  `name = torch.where(cond, name, v)` / `return e`
        name, value, line = assigns[0]
        if tensors.kind(cst.Name(name)) not in (TENSOR, WEAK) or \
                not (tensors.kind(value) in (TENSOR, WEAK) or simple_arm(ctx, value, name)) or not is_pure(ctx, value):
            return None
        safe = where_is_safe(ctx, cond, cst.Name(name), value, name, (taken,), True) and \
            not (_in_place(line) and _update_hidden(ctx, name, if_node, parents_index))
        new = cst.SimpleStatementLine(
            body=[cst.Assign(targets=[cst.AssignTarget(target=cst.Name(name))],
                             value=expr(f"{t}.where({{c}}, {{a}}, {{b}})", c=test, a=cst.Name(name), b=value))],
            trailing_whitespace=line.trailing_whitespace if line.trailing_whitespace.comment else if_node.body.header)
        return Autofix(f"Select with `{t}.where` instead of returning early", SAFE if safe else UNSAFE,
                       ((if_node, kept + [new]), (line, [])), torch_imports(ctx))

    if tensors.kind(taken) not in (TENSOR, WEAK) and tensors.kind(other) not in (TENSOR, WEAK):
        return None
    bases = sorted(_names(taken) | _names(other))
    simple = any(where_is_safe(ctx, cond, taken, other, n, (), False) for n in bases)  # values, dtype: kept
    safe = k == 0 and any(where_is_safe(ctx, cond, taken, other, n, (taken, other), True) for n in bases)
    if not simple and not (is_pure(ctx, taken) and is_pure(ctx, other) and
                           tensors.kind(taken) == tensors.kind(other) == TENSOR):
        return None
    if k:
        # the statements before `return b` now run first: they must not change what `cond` and `a` read
        if any(a[0] in _names(cond) | _names(taken) for a in assigns) or \
                not all(is_pure(ctx, a[1]) for a in assigns):
            return None
    comment = next((w for w in (other_line.trailing_whitespace, taken_line.trailing_whitespace, if_node.body.header)
                    if w.comment), other_line.trailing_whitespace)
    new = cst.SimpleStatementLine(body=[cst.Return(value=expr(f"{t}.where({{c}}, {{a}}, {{b}})", c=test, a=taken,
                                                                  b=other))], trailing_whitespace=comment)
    moved = [s.deep_clone() for s in following[:k]]
    edits = [(if_node, kept + moved + [new])]
    if consumed_from:
        edits += [(s, []) for s in following[:k + 1]]
    return Autofix(f"Select with `{t}.where` instead of returning early", SAFE if safe else UNSAFE, tuple(edits),
                   torch_imports(ctx))


def where_is_safe(ctx, cond: cst.BaseExpression, a: cst.BaseExpression, b: cst.BaseExpression, base: str,
                  held: Sequence[cst.BaseExpression], seen: bool) -> bool:
    """`torch.where(cond, a, b)` gives the caller exactly what branching between `a` and `b` gave, when:

    * `cond` is a 0-d tensor, and `a` and `b` are elementwise functions of the tensor `base` with numbers
      (`simple_arm`): shape kept, both cheap and harmless to compute, gradients finite;
    * `base` is evidently a tensor (a Python number would come back as a 0-d tensor);
    * `a` and `b` have one dtype (`same_dtype`: an integer `x` in `x if c else x * 0.5` would become float;
      a floating `x`, `Tensors.floating`, stays what it is with any number);
    * the caller cannot tell the new tensor torch.where returns from what it got before: no value in `held`
      (what the branch handed on, as it was then) may be a tensor the caller holds, or the result is not
      `seen` as itself (returned, stored, updated in place...: `aliasing.handed_on`).

    The one test of the where-fixes (branch, conditional expression, early return)."""
    return zero_dim(ctx, cond) and simple_arm(ctx, a, base) and simple_arm(ctx, b, base) and \
        _evident_tensor(ctx, base, cond) and same_dtype(ctx, a, b, base) and \
        not (seen and any(may_alias(ctx, v) for v in held))


def _update_hidden(ctx, name: str, if_node: cst.If, parents_index: int) -> bool:
    """An in-place update of `name` (`name += v`) that the fix turns into a new binding (`name =
    torch.where(...)`) would hide a change someone else sees: the tensor `name` holds before `if_node` may be
    the caller's (`may_alias`), or was handed on before (`z = name`)."""
    block = ctx.parents[parents_index - 1].body
    old = value_before(block, if_node, name)
    return may_alias(ctx, old if old is not None else cst.Name(name)) or \
        name_escapes(ctx, name, if_node, ctx.parents[:parents_index], before=True)


def _in_place(line: cst.SimpleStatementLine) -> bool:
    return isinstance(line.body[0], cst.AugAssign)


def _evident_tensor(ctx, name: str, cond: cst.CSTNode) -> bool:
    """`name` holds a tensor: inferred so, or probably so and read by the tensor condition (`y.sum() > 0`), or
    known to be a floating-point one (`emb = helper(t)` where the helper of this file returns `torch.cat` of
    `torch.cos(...)` ...: `Tensors.floating`)."""
    tensors = Tensors.strict_of(ctx)           # not by the guess that `forward`'s parameters are tensors
    kind = tensors.kind(cst.Name(name))
    return kind == TENSOR or (kind == WEAK and name in _names(cond)) or \
        tensors.floating(cst.Name(name)) == FLOAT_TENSOR


def _names(node: cst.CSTNode) -> set:
    return {n.value for n in nodes(node) if isinstance(n, cst.Name)}
