"""Objects a function makes afresh at every call, handed to compiled code from a loop (DYN521): a closure that
captures a value the loop changes (`make_act(slope)` returning `lambda t: ... slope * t`), an instance of a class
the function defines (`class Box: ...; return Box(x)`)."""
from __future__ import annotations

import ast
from typing import Optional, Set, Tuple

import libcst as cst

from dynlint.analysis import guard_lines
from dynlint.analysis.defs import body_nodes
from dynlint.analysis.guards import effect, recompiles
from dynlint.linter.rule import Example, register
from dynlint.rules.recompiles.argument_values import bound_in_loop
from dynlint.rules.recompiles.common import SiteBookkeeping, bound_parameter, varying


def _local_class(fdef: ast.AST) -> Optional[str]:
    """The class a def defines in its own body and returns an instance of (`class Box: ...; return Box(x)`)."""
    classes = {n.name for n in body_nodes(fdef) if isinstance(n, ast.ClassDef)}
    returns = [n.value for n in body_nodes(fdef) if isinstance(n, ast.Return)]
    made = {r.func.id for r in returns if isinstance(r, ast.Call) and isinstance(r.func, ast.Name)}
    return next(iter(made & classes), None) if returns and len(made) == 1 and \
        all(isinstance(r, ast.Call) for r in returns) else None


def _closure(fdef: ast.AST) -> Optional[Tuple[ast.AST, Set[str]]]:
    """The function a def returns that it makes in its body (`return lambda t: ...`, or a nested def it returns),
    and the def's parameters that function reads (its closure's cells)."""
    returns = [n.value for n in body_nodes(fdef) if isinstance(n, ast.Return)]
    if len(returns) != 1:
        return None
    inner = returns[0] if isinstance(returns[0], ast.Lambda) else next(
        (n for n in body_nodes(fdef) if isinstance(n, ast.FunctionDef) and isinstance(returns[0], ast.Name) and
         n.name == returns[0].id), None)
    if inner is None:
        return None
    params = {a.arg for a in fdef.args.posonlyargs + fdef.args.args + fdef.args.kwonlyargs}
    own = {a.arg for a in inner.args.posonlyargs + inner.args.args + inner.args.kwonlyargs}
    read = {n.id for n in ast.walk(inner) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return inner, (params & read) - own


def _passed(call: cst.Call, param: str, index: Optional[int]) -> Optional[cst.BaseExpression]:
    """What `call` passes for `param` (positional `index`): its keyword, or the positional argument there."""
    keyword = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == param), None)
    positional = [a for a in call.args if a.keyword is None]
    if keyword is not None or index is None or index >= len(positional) or any(a.star for a in positional[:index + 1]):
        return keyword
    return positional[index].value


@register
class MadeAtEachCall(SiteBookkeeping):
    """Checks for a compiled callable that a loop hands an object made afresh at each call: a closure capturing
    a value the loop changes, or an instance of a class a factory function defines."""
    code = "DYN521"
    name = "object-made-at-each-call"
    message = "compiled `{callee}` gets {what}, made anew at each call in the loop: Dynamo guards on {guard}: {effect}"
    fix = ("Make the object once, before the loop, and pass what changes as an argument (a number, a tensor); define "
           "classes at the module level")
    recompiles = True
    scope = "site"
    why = """
        Dynamo guards on what a compiled function reads of the objects it is handed. A closure a factory
        returns (`make_act(slope)` giving `lambda t: torch.where(t > 0, t, slope * t)`) is read through its
        cells: the captured value is guarded where the closure reads it (`act.__closure__[0].cell_contents ==
        0.1`), so a loop that makes one per value recompiles (a number once, then dynamic; a string on every
        value). A class defined inside a function is a new class object at every call of that function: an
        instance of it is guarded on its type's identity (`___check_type_id(b, ...)`) where the compiled code
        first reads it, and every call's instance fails that guard, until `recompile_limit` (measured, torch
        2.13; docs/guards.md).
    """
    INVALID = [Example("""
        import torch

        def make_act(slope):
            return lambda t: torch.where(t > 0, t, slope * t)

        @torch.compile
        def apply(x, act):
            return act(x) * 2

        def run(x):
            for slope in [0.1, 0.2, 0.3]:
                apply(x, make_act(slope))
    """, "run(torch.randn(4))"), Example("""
        import torch

        def wrap(x):
            class Box:
                def __init__(self, v):
                    self.v = v
            return Box(x)

        @torch.compile
        def unbox(b):
            return b.v + 1

        def run(x):
            for _ in range(3):
                unbox(wrap(x))
    """, "run(torch.randn(4))")]
    VALID = [Example("""
        import torch

        class Box:
            def __init__(self, v):
                self.v = v

        @torch.compile
        def unbox(b):
            return b.v + 1

        def run(x):
            for _ in range(3):
                unbox(Box(x))
    """, "run(torch.randn(4))")]

    def visit_Call(self, node: cst.Call) -> None:
        loops = [b for b in self.ctx.blocks if isinstance(b, (cst.For, cst.While))]
        if not loops or not isinstance(node.func, cst.Name) or node.func.value not in self.compiled_names():
            return
        callee, ix = node.func.value, self.ctx.index
        entry = self.compiled_entry(callee)
        info = ix.functions.get(entry or "") if ix is not None else None
        if info is None:
            return
        for arg in node.args:
            value = bound_in_loop(self.ctx, arg.value, loops, node) or arg.value
            factory = ix.functions.get(value.func.value) if isinstance(value, cst.Call) and \
                isinstance(value.func, cst.Name) else None
            fdef = guard_lines.function_at(self.ctx.source or "", factory.def_line) if factory is not None else None
            param = bound_parameter(info, node, arg) if not arg.star else None
            if fdef is None or param is None or not self.reads(entry, param):
                continue
            if self._closure_cell(node, value, fdef, loops, callee) or self._local_instance(node, value, fdef, entry,
                                                                                               param, callee):
                return

    def _closure_cell(self, node, made: cst.Call, fdef: ast.AST, loops, callee: str) -> bool:
        """The closure `made` returns captures a parameter the loop passes a changing value for: guarded where the
        closure reads the cell."""
        found = _closure(fdef)
        if found is None:
            return False
        inner, captured = found
        names = [a.arg for a in fdef.args.posonlyargs + fdef.args.args]
        for param in sorted(captured):
            passed = _passed(made, param, names.index(param) if param in names else None)
            changing = varying(self.ctx, passed, loops) if passed is not None else None
            guard = f"closure {changing[1]}" if changing else ""
            read = next((n for n in ast.walk(inner) if isinstance(n, ast.Name) and n.id == param and
                         isinstance(n.ctx, ast.Load)), None)
            if changing is None or guard not in ("closure int", "closure float", "closure bool", "closure str") or \
                    not recompiles(guard) or read is None:
                continue
            line, col = self.ctx.position(made)[:2]
            self.ctx.report(self, made, self.format_message(
                callee=callee, what=f"a closure of `{fdef.name}` holding `{param}`", guard=f"the value of `{param}`",
                effect=effect(guard)), at=guard_lines.span_of(self.ctx.source or "", read),
                related=[(line, col, f"`{changing[0]}` changes here")])
            return True
        return False

    def _local_instance(self, node, made: cst.Call, fdef: ast.AST, entry: str, param: str, callee: str) -> bool:
        """`made` returns an instance of a class its function defines: a new class at each call, guarded by
        identity where the compiled code first reads the argument."""
        cls = _local_class(fdef)
        span = self.guard_span(entry, param, at_entry=False) if cls else None
        if span is None:
            return False
        line, col = self.ctx.position(made)[:2]
        self.ctx.report(self, made, self.format_message(
            callee=callee, what=f"an instance of `{cls}`, a class `{fdef.name}` defines", guard="its class's identity",
            effect=effect("class made at each call")), at=span, related=[(line, col, f"`{fdef.name}` runs here")])
        return True
