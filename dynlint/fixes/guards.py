"""Fixes that keep what Dynamo cannot trace out of the graph: code that runs only eagerly
(`if not torch.compiler.is_compiling():`), a raising check as an in-graph assertion, Python logic on tensors
as `torch.logical_*` ops, `any(t)` as `t.any()`."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from dynlint.analysis.aliasing import nodes
from dynlint.analysis.conditions import any_all, zero_dim
from dynlint.analysis.names import COMPILING_TRUE
from dynlint.analysis.purity import is_pure
from dynlint.analysis.tensors.inference import Tensors
from dynlint.analysis.tensors.kinds import TENSOR, VALUE
from dynlint.fixes.common import (
    SAFE,
    UNSAFE,
    Autofix,
    atom,
    bool_tensor,
    code,
    expr,
    is_compiling_test,
    statement_parent_ok,
    torch_imports,
    torch_name,
)


def standalone_statement(ctx, node: cst.CSTNode) -> Optional[cst.SimpleStatementLine]:
    """The statement line whose only statement is the expression `node` (`print(x)` on a line of its own), when
    that line stands in an indented block or at module level (so an `if` can replace it)."""
    parents = ctx.parents
    if len(parents) < 3 or not isinstance(parents[-1], cst.Expr) or parents[-1].value is not node:
        return None
    line = parents[-2]
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    return line if isinstance(parents[-3], (cst.IndentedBlock, cst.Module)) else None


def eager_only(stmt: cst.BaseStatement, t: str) -> cst.If:
    """`if not torch.compiler.is_compiling(): <stmt>`: runs eagerly, skipped (not traced) under Dynamo."""
    return cst.If(test=is_compiling_test(t, True), body=cst.IndentedBlock(body=[stmt.with_changes(leading_lines=())]))


def is_eager_only_block(node: cst.CSTNode, ctx) -> bool:
    """`if not torch.compiler.is_compiling(): ...` without an else."""
    if not isinstance(node, cst.If) or node.orelse is not None:
        return False
    test = node.test
    if not (isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)):
        return False
    inner = test.expression
    return isinstance(inner, cst.Call) and not inner.args and (ctx.qualify(inner.func) or "") in COMPILING_TRUE


def guard_eager_only(ctx, call: cst.Call, what: str) -> Optional[Autofix]:
    """Wrap the statement `call` stands in (a print, a log call) in `if not torch.compiler.is_compiling():` --
    it keeps running eagerly and is skipped while compiling, which Dynamo traces without a break. When that
    statement is the whole body of an `if` with a side-effect-free condition (`if not torch.isfinite(loss):
    logger.warning(...)`), the `if` goes under the guard too, so its condition is not traced either. Safe when
    the call's arguments have no side effects (skipping them changes nothing else); otherwise unsafe."""
    line = standalone_statement(ctx, call)
    if line is None:
        return None
    parents = ctx.parents
    i = len(parents) - 2                # parents[i] is `line`
    target: cst.BaseStatement = line
    while i >= 3 and isinstance(parents[i - 1], cst.IndentedBlock) and len(parents[i - 1].body) == 1 and \
            isinstance(parents[i - 2], cst.If) and parents[i - 2].body is parents[i - 1] and \
            parents[i - 2].orelse is None and statement_parent_ok(parents, i - 2) and is_pure(ctx, parents[i - 2].test):
        target = parents[i - 2]
        i -= 2
    t = torch_name(ctx)
    safe = all(is_pure(ctx, a.value) for a in call.args)
    return Autofix(f"Run {what} only when not compiling (`if not {t}.compiler.is_compiling():`)",
                   SAFE if safe else UNSAFE, ((target, [eager_only(target, t)]),), torch_imports(ctx))


def raise_guard_to_assert(ctx, if_node: cst.If, parents_index: int,
                          test: Optional[cst.BaseExpression] = None) -> Optional[Autofix]:
    """`if cond: raise E(msg)` -> an in-graph assertion while compiling, the original check when eager:

        if torch.compiler.is_compiling():
            torch._assert_async(torch.logical_not(cond), msg)
        elif cond:
            raise E(msg)

    Unsafe: under torch.compile a failing check raises RuntimeError instead of E, and on CUDA the assertion is
    asynchronous (a device-side assert). Python-valued parts of an `and` chain stay a Python `if`."""
    tensors = Tensors.of(ctx)
    body = if_node.body
    if if_node.orelse is not None or not statement_parent_ok(ctx.parents, parents_index) or \
            not isinstance(body, cst.IndentedBlock) or len(body.body) != 1:
        return None
    line = body.body[0]
    if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and isinstance(line.body[0], cst.Raise)):
        return None
    test = if_node.test if test is None else test
    if not is_pure(ctx, test):
        return None
    parts = []
    cond = test
    while isinstance(cond, cst.BooleanOperation) and isinstance(cond.operator, cst.And):
        parts.insert(0, cond.right)
        cond = cond.left
    parts.insert(0, cond)
    value_parts = [p for p in parts if tensors.kind(p) != TENSOR and not _tensor_logic(ctx, p)]
    tensor_parts = [p for p in parts if p not in value_parts]
    if not tensor_parts or any(tensors.kind(p) not in (VALUE,) for p in value_parts):
        return None
    t = torch_name(ctx)
    conds = [bool_tensor(ctx, p, t) for p in tensor_parts]
    if any(c is None for c in conds):
        return None
    failing = conds[0]
    for c in conds[1:]:
        failing = expr(f"{t}.logical_and({{a}}, {{b}})", a=failing, b=c)
    exc = line.body[0].exc
    message = None
    if isinstance(exc, cst.Call) and exc.args and isinstance(exc.args[0].value, cst.SimpleString):
        message = exc.args[0].value
    if message is None:
        message = cst.SimpleString(repr(f"{code(exc.func) if isinstance(exc, cst.Call) else code(exc)}: "
                                        f"{' '.join(code(test).split())}"))
    check = cst.SimpleStatementLine(body=[cst.Expr(expr(f"{t}._assert_async({t}.logical_not({{c}}), {{m}})",
                                                        c=failing, m=message))])
    compiled_body: cst.BaseStatement = check
    if value_parts:
        guard = value_parts[0]
        for p in value_parts[1:]:
            guard = cst.BooleanOperation(left=guard, operator=cst.And(), right=p)
        compiled_body = cst.If(test=guard, body=cst.IndentedBlock(body=[check]))
    new = cst.If(test=is_compiling_test(t, False), body=cst.IndentedBlock(body=[compiled_body]),
                 orelse=if_node.with_changes(leading_lines=()))
    return Autofix(f"Check with `{t}._assert_async` while compiling, raise when eager", UNSAFE,
                   ((if_node, [new]),), torch_imports(ctx))


def logic_to_tensor_ops(ctx, node: cst.BaseExpression, in_assert: bool) -> Optional[Autofix]:
    """`a and b` / `a or b` / `not a` on tensors -> `torch.logical_and(a, b)` / `logical_or` / `logical_not`.
    Safe for `and`/`or` of boolean 0-d tensors outside an `assert` (Python returns one of the operands, a
    0-d bool tensor, and so does the fix); unsafe for `not` (a Python bool becomes a tensor), for operands that
    are not provably boolean 0-d tensors, and inside `assert` (the compiled assertion raises RuntimeError)."""
    t = torch_name(ctx)
    new = bool_tensor(ctx, node, t)
    if new is None or not is_pure(ctx, node):
        return None
    leaves = list(_logic_leaves(node))
    safe = isinstance(node, cst.BooleanOperation) and not in_assert and \
        all(zero_dim(ctx, leaf) and (Tensors.of(ctx).is_bool(leaf) or any_all(ctx, leaf)) for leaf in leaves) and \
        not any(isinstance(n, cst.UnaryOperation) and isinstance(n.operator, cst.Not) for n in nodes(node))
    return Autofix(f"Combine with `{t}.logical_*` tensor ops", SAFE if safe else UNSAFE,
                   ((node, new.with_changes(lpar=node.lpar, rpar=node.rpar)),), torch_imports(ctx))


def _logic_leaves(node: cst.BaseExpression):
    if isinstance(node, cst.BooleanOperation):
        yield from _logic_leaves(node.left)
        yield from _logic_leaves(node.right)
    elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        yield from _logic_leaves(node.expression)
    else:
        yield node


def builtin_any_all(ctx, call: cst.Call) -> Optional[Autofix]:
    """`any(t)` / `all(t)` of a tensor -> `t.any()` / `t.all()`: unsafe, a Python bool becomes a 0-d tensor."""
    if len(call.args) != 1 or call.args[0].keyword or call.args[0].star:
        return None
    arg = call.args[0].value
    if isinstance(arg, (cst.GeneratorExp, cst.ListComp)) or Tensors.of(ctx).kind(arg) != TENSOR:
        return None
    new = cst.Call(func=cst.Attribute(value=atom(arg), attr=cst.Name(call.func.value)))
    return Autofix(f"Use the tensor method `.{call.func.value}()`", UNSAFE,
                   ((call, new.with_changes(lpar=call.lpar, rpar=call.rpar)),))


def _tensor_logic(ctx, node) -> bool:
    return isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not) and \
        Tensors.of(ctx).kind(node.expression) == TENSOR
