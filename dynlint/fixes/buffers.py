"""Python counters of an nn.Module (`self.calls += 1`) kept in a non-persistent buffer, which `+=` updates in
the graph instead of changing an int Dynamo guards on."""
from __future__ import annotations

import io
from typing import Optional

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from dynlint.analysis.aliasing import nodes
from dynlint.analysis.tensors.assignments import parse_lines
from dynlint.linter.finding import Edit
from dynlint.fixes.common import UNSAFE, Autofix, code, torch_imports, torch_name


def counter_to_buffer(ctx, update: cst.AugAssign) -> Optional[Autofix]:
    """`self.calls += 1` in a traced method of an nn.Module whose `__init__` set `self.calls = 0`: keep the
    counter in a non-persistent buffer (`self.register_buffer("calls", torch.tensor(0), persistent=False)`), which
    `+=` updates in place inside the graph instead of changing a Python int that Dynamo guards on. Only where
    the class (its source in this file) does nothing else with the attribute: `__init__` sets it once, to an
    integer, on a line of its own after `super().__init__()`, and every other mention adds or subtracts an
    integer. Unsafe: whoever reads the attribute gets a 0-d tensor instead of an int, and it moves with `.to()`."""
    target = update.target
    if not isinstance(target, cst.Attribute):
        return None
    attr, ix, cls = target.attr.value, ctx.index, ctx.class_name
    info = ix.classes.get(cls) if ix is not None and cls else None
    indent = _indent_of(ctx.source, info.start) if info is not None and ctx.source else 0
    module = parse_lines(ctx, info.start, info.end, indent) if info is not None else None
    if module is None:
        return None
    classdef = module.body[0] if len(module.body) == 1 else None
    if not isinstance(classdef, cst.ClassDef) or classdef.name.value != cls or \
            not isinstance(classdef.body, cst.IndentedBlock):
        return None
    init = [s for s in classdef.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"]
    if len(init) != 1 or not isinstance(init[0].body, cst.IndentedBlock):
        return None
    body = list(init[0].body.body)
    supers = [i for i, s in enumerate(body) if _is_super_init(s)]
    sets = [i for i, s in enumerate(body) if _sets_self_attr(s, attr)]
    if not supers or not sets or sets[0] < supers[0] or not _integer(body[sets[0]].body[0].value):
        return None
    setting = body[sets[0]]
    # every `self.<attr>` in the class is that assignment's target or adds / subtracts an integer
    every = nodes(classdef)
    allowed = {id(setting.body[0].targets[0].target)} | {
        id(n.target) for n in every if isinstance(n, cst.AugAssign) and _integer(n.value) and
        isinstance(n.operator, (cst.AddAssign, cst.SubtractAssign))}
    if any(_is_self_attr(n, attr) and id(n) not in allowed for n in every):
        return None
    r = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)[setting]
    if r.start.line != r.end.line:
        return None
    t = torch_name(ctx)
    value = code(setting.body[0].value)
    new = setting.with_changes(body=[cst.parse_statement(
        f'self.register_buffer("{attr}", {t}.tensor({value}), persistent=False)\n').body[0]], leading_lines=())
    line = r.start.line + info.start - 1
    edit = Edit(line, r.start.column + indent, line, r.end.column + indent, "SimpleStatementLine",
                module.code_for_node(new), True)
    return Autofix(f"Keep `self.{attr}` in a buffer (`self.register_buffer(\"{attr}\", {t}.tensor({value}), "
                   f"persistent=False)` in `__init__`)", UNSAFE, (), torch_imports(ctx), (edit,))


def _integer(node: cst.CSTNode) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, cst.Integer)


def _is_self_attr(node: cst.CSTNode, attr: str) -> bool:
    return isinstance(node, cst.Attribute) and node.attr.value == attr and isinstance(node.value, cst.Name) and \
        node.value.value == "self"


def _sets_self_attr(stmt: cst.CSTNode, attr: str) -> bool:
    """`self.<attr> = value` alone on its line."""
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and \
        isinstance(stmt.body[0], cst.Assign) and len(stmt.body[0].targets) == 1 and \
        _is_self_attr(stmt.body[0].targets[0].target, attr)


def _is_super_init(stmt: cst.CSTNode) -> bool:
    """`super().__init__(...)` or `super(Cls, self).__init__(...)` as a statement."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)):
        return False
    call = stmt.body[0].value
    return isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and \
        call.func.attr.value == "__init__" and isinstance(call.func.value, cst.Call) and \
        isinstance(call.func.value.func, cst.Name) and call.func.value.func.value == "super"


def _indent_of(source: str, line: int) -> int:
    text = list(io.StringIO(source, newline=""))[line - 1]
    return len(text) - len(text.lstrip(" "))
