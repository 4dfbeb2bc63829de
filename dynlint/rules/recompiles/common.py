"""What the recompile rules (and the compile set-up rules) share: which Python scalars a loop binds, which names
of an argument vary between calls, and `SiteBookkeeping`, the base of site rules that follow names through one
top-level statement."""
from __future__ import annotations

from typing import List, Optional, Set, Tuple

import libcst as cst

from dynlint.analysis.names import COMPILE
from dynlint.linter.walker import children
from dynlint.rules.common import TorchRule


GRAD_OFF = frozenset({"torch.no_grad", "torch.inference_mode"})        # what turns grad mode off for its block


def loop_scalar_kind(loop: cst.For, name: str) -> Optional[str]:
    """'int', 'str', 'float', 'bool' when `for <name> in ...` binds Python scalars, else None."""
    target, it = loop.target, loop.iter
    if isinstance(it, cst.Call) and isinstance(it.func, cst.Name):
        if it.func.value == "range" and isinstance(target, cst.Name) and target.value == name:
            return "int"
        if it.func.value == "enumerate" and isinstance(target, cst.Tuple) and target.elements and \
                isinstance(target.elements[0].value, cst.Name) and target.elements[0].value.value == name:
            return "int"
        return None
    if isinstance(it, (cst.List, cst.Tuple, cst.Set)) and isinstance(target, cst.Name) and target.value == name \
            and it.elements:
        kinds = set()
        for e in it.elements:
            v = e.value
            if isinstance(v, (cst.SimpleString, cst.ConcatenatedString)):
                kinds.add("str")
            elif isinstance(v, cst.Integer):
                kinds.add("int")
            elif isinstance(v, cst.Float):
                kinds.add("float")
            elif isinstance(v, cst.Name) and v.value in ("True", "False"):
                kinds.add("bool")
            else:
                return None
        return kinds.pop() if len(kinds) == 1 else "value"
    return None


def float_expr(node: cst.CSTNode) -> bool:
    """Arithmetic with a float literal or a true division: a float."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Float) or (isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Divide)):
            return True
        if isinstance(n, (cst.BinaryOperation, cst.UnaryOperation)):
            stack.extend(children(n))
    return False


def names_in(node: cst.CSTNode) -> Set[str]:
    out = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name):
            out.add(n.value)
        stack.extend(children(n))
    return out


def varying(ctx, value: cst.BaseExpression, loops) -> Optional[Tuple[str, str]]:
    """(name, kind of its values) of a name in `value` that changes between calls: the variable of an
    enclosing loop (`loops`: the `for` statements around it), or a parameter of the enclosing function that a
    loop of this file passes its loop variable to (`for step in range(n): train_step(step)`)."""
    names = {value.value} if isinstance(value, cst.Name) else names_in(value)
    for var in sorted(names):
        for loop in reversed(loops):
            kind = loop_scalar_kind(loop, var)
            if kind:
                return var, kind
    fn = next((f for f in reversed(ctx.functions) if isinstance(f, cst.FunctionDef)), None)
    ix = ctx.index
    if fn is None or ix is None or len(ctx.functions) > 1 or ctx.class_name:
        return None
    params = [p.name.value for p in fn.params.params]
    lines = (ctx.source or "").splitlines()
    calls = list(ix.module_calls) + [c for f in ix.functions.values() for c in f.calls]
    for var in sorted(names & set(params)):
        i = params.index(var)
        for c in calls:
            if c.kind == "name" and c.target == fn.name.value and i < len(c.args) and c.args[i]:
                kind = _caller_loop_kind(lines, c.line, c.args[i])
                if kind:
                    return var, kind
    return None


def headers_around(lines: List[str], line: int, first: int = 1):
    """The lines that open the blocks around line `line` (found by indentation), innermost first, stripped;
    none above line `first`."""
    if not 0 < line <= len(lines):
        return
    indent = len(lines[line - 1]) - len(lines[line - 1].lstrip())
    for text in reversed(lines[max(first, 1) - 1:line - 1]):
        stripped = text.lstrip()
        if not stripped or stripped.startswith("#") or len(text) - len(stripped) >= indent:
            continue
        indent = len(text) - len(stripped)
        yield stripped
        if indent == 0:
            return


def _caller_loop_kind(lines: List[str], line: int, name: str) -> Optional[str]:
    """The kind of values `name` takes at line `line` when it is the variable of the `for` loop around that
    line (found by indentation; its header parsed and judged as `loop_scalar_kind` judges any loop)."""
    for stripped in headers_around(lines, line):
        if stripped.startswith("for ") and stripped.rstrip().endswith(":"):
            try:
                loop = cst.parse_statement(stripped.rstrip() + " pass\n")
            except cst.ParserSyntaxError:
                return None           # a header over several lines: not known here
            return loop_scalar_kind(loop, name) if isinstance(loop, cst.For) else None
    return None


def parameter_names(fn) -> Set[str]:
    """The parameter names of a def (not `*args` / `**kwargs`); none for anything else."""
    if not isinstance(fn, cst.FunctionDef):
        return set()
    ps = fn.params
    return {p.name.value for p in list(ps.params) + list(ps.kwonly_params) + list(ps.posonly_params)}


def _is_compile_call(rule: TorchRule, node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Call) and (rule.call_name(node) or "") in COMPILE


class SiteBookkeeping(TorchRule):
    """Helpers for site rules that follow names through one top-level statement."""
    scope = "site"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._assigned: List[Tuple[str, cst.BaseExpression]] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        # seen in source order, before the uses that ask about them
        for t in node.targets:
            if isinstance(t.target, cst.Name):
                self._assigned.append((t.target.value, node.value))

    def assignments(self) -> List[Tuple[str, cst.BaseExpression]]:
        return self._assigned

    def compiled_here(self) -> Set[str]:
        """Compiled names, plus the modules handed to torch.compile in this statement (`cm =
        torch.compile(model)`: both `cm` and `model` are the compiled module)."""
        names = set(self.compiled_names())
        for target, value in self.assignments():
            if _is_compile_call(self, value):
                names.add(target)
                if value.args and isinstance(value.args[0].value, cst.Name):
                    names.add(value.args[0].value.value)
        return names

    def module_classes(self, name: str):
        """Project classes a local/module name was built from (following `torch.compile(...)`)."""
        project, ix = self.ctx.project, self.ctx.index
        if not project or not ix:
            return []
        ctors = list(ix.module_instances.get(name, []))
        for fn in ix.functions.values():
            ctors += fn.instances.get(name, [])
        for target, value in self.assignments():
            if target == name and _is_compile_call(self, value) and value.args:
                inner = value.args[0].value
                if isinstance(inner, cst.Name) and inner.value != name:
                    ctors += [c for c in self.module_classes_ctors(inner.value)]
                elif isinstance(inner, cst.Call):
                    ctors.append(self.ctx.qualify(inner.func) or "")
        out = []
        for c in ctors:
            if not c or c.split(".")[-1][:1].islower():
                continue
            r = project.resolve(ix, c)
            if r and r[0] == "class":
                out.append(r[1])
        return out

    def module_classes_ctors(self, name: str) -> List[str]:
        ix = self.ctx.index
        ctors = list(ix.module_instances.get(name, []))
        for fn in ix.functions.values():
            ctors += fn.instances.get(name, [])
        for target, value in self.assignments():
            if target == name and isinstance(value, cst.Call):
                ctors.append(self.ctx.qualify(value.func) or "")
        return ctors
