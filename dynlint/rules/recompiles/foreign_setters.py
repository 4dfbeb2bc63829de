"""DYN514 across files: a method of a class of this unit compiled elsewhere (`step_fn = torch.compile(
scheduler.step)` in a script), and a call there, through the same kind of object, of another method of the class
that assigns a Python number the compiled method reads (`scheduler.set_timesteps(steps)` with `self.
num_inference_steps = steps`), with a new value before the next compiled call: in a loop over the values, or in a
function whose callers pass different ones (`sample(..., steps=4)`, `sample(..., steps=8)`). Dynamo guards the
attribute as `fn.__self__.<attr>` at the compiled method's first read of it, whichever file changes it."""
from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Tuple

import libcst as cst

from dynlint.analysis import guard_lines
from dynlint.analysis.held import held_by_name
from dynlint.analysis.tensors.foreign import _line_in, alias_calls
from dynlint.linter.walker import walk
from dynlint.rules.common import source_of
from dynlint.rules.recompiles.handed import passed_values
from dynlint.rules.recompiles.rows import _binds_target

Related = Tuple[str, int, int, str]


def set_elsewhere(rule) -> Iterator[Tuple[str, str, tuple, List[Related]]]:
    """(the compiled method, `self.<attr>`, the span of its guard, [(file, line, 0, what) of the calls that set
    it]) for each attribute a method of the unit compiled as an entry reads and calls in other files change."""
    ctx = rule.ctx
    ix, unit = ctx.index, ctx.unit
    if ix is None or ctx.project is None:
        return
    first, last = unit.line_offset + 1, unit.line_offset + unit.text.count("\n") + 1
    for qual, info in ix.functions.items():
        if not (first <= info.def_line <= last) or info.nested_in or not info.cls or \
                ctx.regions.get(qual) != (qual,):
            continue
        method = qual.rpartition(".")[2]
        setters = _setters(rule, info.cls, method, qual)
        if not setters:
            continue
        found: Dict[str, List[Related]] = {}
        for other, fdef, _, calls, cinfo in alias_calls(rule.tensors, info.cls, method) or ():
            for call, setter in _setter_calls(fdef, setters):
                receiver = call.func.value.value
                held = held_by_name(ctx.project, other.ctx.index, cinfo, receiver)
                if f"{ix.module}.{info.cls}" not in held or not _new_value(other.ctx, fdef, cinfo, call, calls):
                    continue
                line = _line_in(other.ctx.source or "", cinfo, call)
                for attr in setters[setter]:
                    related = (other.ctx.index.path, line, 0, f"`{source_of(call)}` changes `self.{attr}` here")
                    found.setdefault(attr, []).append(related)
        for attr, related in found.items():
            yield qual, f"self.{attr}", rule.guard_span(qual, f"self.{attr}", at_entry=False), \
                list(dict.fromkeys(related))


def _setters(rule, cls: str, method: str, qual: str) -> Dict[str, List[str]]:
    """method -> the attributes it assigns a Python number to (`state_set._numbers_assigned`) that the compiled
    method `qual` reads where Dynamo guards them; `__init__` and the compiled method itself aside."""
    from dynlint.rules.recompiles.state_set import _numbers_assigned
    ix, source = rule.ctx.index, rule.ctx.source or ""
    out: Dict[str, List[str]] = {}
    for q, f in ix.functions.items():
        name = q.rpartition(".")[2]
        if f.cls != cls or f.nested_in or name in ("__init__", method):
            continue
        fn = guard_lines.function_at(source, f.def_line)
        attrs = [a for a in (_numbers_assigned(fn) if fn is not None else ())
                 if rule.guard_span(qual, f"self.{a}", at_entry=False) is not None]
        if attrs:
            out[name] = attrs
    return out


def _setter_calls(fdef: cst.FunctionDef, setters: Dict[str, List[str]]) -> List[Tuple[cst.Call, str]]:
    """The calls `obj.<setter>(...)` in `fdef` (not of `self`), with the setter's name."""
    out: List[Tuple[cst.Call, str]] = []

    def enter(node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                isinstance(node.func.value, cst.Name) and node.func.value.value != "self" and \
                node.func.attr.value in setters:
            out.append((node, node.func.attr.value))
        return True

    walk(fdef, enter, lambda node: None)
    return out


def _new_value(ctx, fdef: cst.FunctionDef, info, call: cst.Call, compiled: List[cst.Call]) -> bool:
    """The setter `call` hands a new value before the next compiled call: an argument is the variable of a `for`
    loop around both, or a parameter of the function that its callers in that file pass different values."""
    names = {a.value.value for a in call.args if isinstance(a.value, cst.Name)}
    if any(_binds_target(loop.target, n) for loop in _loops_around(fdef, call, compiled) for n in names):
        return True
    for p in names & set(info.params):
        given = passed_values(ctx, info.qualname, p)
        if len({ast.dump(g) if g is not None else "" for g in given}) > 1:
            return True
    return False


def _loops_around(fdef: cst.FunctionDef, call: cst.Call, compiled: List[cst.Call]) -> List[cst.For]:
    """The `for` loops of `fdef` that hold both `call` and one of the `compiled` calls."""
    stack: List[cst.CSTNode] = []
    holding: Dict[int, set] = {}

    def enter(node: cst.CSTNode) -> bool:
        if node is call or any(node is c for c in compiled):
            for n in stack:
                if isinstance(n, cst.For):
                    holding.setdefault(id(n), set()).add("set" if node is call else "compiled")
        stack.append(node)
        return True

    loops: List[cst.For] = []

    def leave(node: cst.CSTNode) -> None:
        if stack and stack[-1] is node:
            stack.pop()
        if isinstance(node, cst.For) and holding.get(id(node)) == {"set", "compiled"}:
            loops.append(node)

    walk(fdef, enter, leave)
    return loops
