"""Instances of one module class compiled one by one (`for block in model.blocks: block.compile()`,
`setattr(model, name, torch.compile(child))` in a loop over children): every instance runs the same `forward`
code, and Dynamo keeps one cache per code object, so the graph traced for one instance is guarded on the
constants that instance keeps (`self.factor == 0.5`); an instance built with another value for that attribute
(`Scale(2.0)` beside `Scale(0.5)`) fails the guard at forward's first read of it and compiles again (measured:
tests/test_changing_values.py). A module compiled whole inlines its children instead, each guarded on its own
attribute, and recompiles nothing."""
from __future__ import annotations

import ast
from typing import Iterator, List, Optional, Tuple

from dynlint.analysis import guard_lines
from dynlint.linter.index import dotted_name

Related = Tuple[str, int, int, str]


def instances_compiled_apart(rule) -> Iterator[Tuple[str, str, object, object, List[Related]]]:
    """(the compiled method, its class's parameter-kept attribute, one value, another, related locations: the two
    constructions and a loop that compiles instances one by one) for each class of the unit whose method
    compiled one instance at a time (forward, or `torch.compile(x.m)`) reads an attribute its `__init__` keeps
    from a parameter, that the project builds with two different constants for it."""
    from dynlint.rules.recompiles.constants import _bound_constants
    ctx = rule.ctx
    ix, project = ctx.index, ctx.project
    if ix is None or project is None:
        return
    loops = project.per_run(_compiled_one_by_one_memo)
    if "sites" not in loops:
        loops["sites"] = _compiled_one_by_one(project, ctx)
    if not loops["sites"]:
        return
    methods = sorted({m for _, _, m in loops["sites"]})
    for cname, cinfo in sorted(ix.classes.items()):
        init = ix.functions.get(f"{cname}.__init__")
        fn = guard_lines.function_at(ctx.source or "", init.def_line) if init is not None else None
        compiled = [m for m in methods if f"{cname}.{m}" in ix.functions]
        if fn is None or not compiled or not cinfo.param_attrs:
            continue
        params = [p for p in init.params if p != "self"]
        built = [(rel, c.line, _bound_constants(c, params, fn)) for rel, c in _constructions(project, ix, cname)]
        for attr, param in sorted(cinfo.param_attrs.items()):
            values = {}
            for rel, line, bound in built:
                if param in bound:
                    values.setdefault(repr(bound[param]), (rel, line, bound[param]))
            if len(values) < 2:
                continue
            (rel1, line1, v1), (rel2, line2, v2) = list(values.values())[:2]
            for method in compiled:
                rel3, line3, _ = next(site for site in loops["sites"] if site[2] == method)
                yield f"{cname}.{method}", f"self.{attr}", v1, v2, [
                    (rel1, line1, 0, f"`{cname}(...)` keeps `{attr}={v1!r}` here"),
                    (rel2, line2, 0, f"`{cname}(...)` keeps `{attr}={v2!r}` here"),
                    (rel3, line3, 0, "instances are compiled one by one here")]


def _compiled_one_by_one_memo() -> dict:
    return {}


def _constructions(project, ix, cname: str):
    """(file, call) of each call of the class `cname` in its file and in the files importing it."""
    rels = {ix.path} | set(project.facts.importers.get(f"{ix.module}.{cname}", ()))
    for rel in sorted(rels):
        cix = project.by_path.get(rel)
        for calls in ([cix.module_calls] + [f.calls for f in cix.functions.values()]) if cix is not None else ():
            for c in calls:
                if c.kind == "name" and not c.unpacks and (c.target == cname or
                                                            cix.qualify(c.target) == f"{ix.module}.{cname}"):
                    yield rel, c


def _compiled_one_by_one(project, ctx) -> List[Tuple[str, int, str]]:
    """(file, line, method) of each `x.compile()`, `torch.compile(x)` (forward) or `torch.compile(x.m)` (m) of the
    variable `x` of a loop around it: the objects a loop visits compiled one at a time. Asked of the index first;
    the few candidate files parsed."""
    out: List[Tuple[str, int, str]] = []
    for rel, cix in sorted(project.by_path.items()):
        candidates = [c for f in cix.functions.values() for c in f.calls
                      if c.kind == "name" and (c.target.count(".") == 1 and c.target.endswith(".compile") or
                                               cix.qualify(c.target) == "torch.compile" and c.args and
                                               c.args[0] and c.args[0].count(".") <= 1)]
        text = None if not candidates else ctx.source if rel == ctx.path else \
            project.sources(rel) if project.sources is not None else None
        tree = guard_lines.parsed(text) if text else None
        for loop in (n for n in ast.walk(tree) if isinstance(n, ast.For)) if tree is not None else ():
            targets = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
            for n in (n for s in loop.body for n in ast.walk(s)):
                method = _compiles(n, cix, targets) if isinstance(n, ast.Call) else None
                if method:
                    out.append((rel, n.lineno, method))
    return out


def _compiles(call: ast.Call, cix, targets) -> Optional[str]:
    """The method a call compiles on the loop's variable: `forward` for `block.compile()` or
    `torch.compile(block)`, `m` for `torch.compile(block.m)`."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "compile" and isinstance(func.value, ast.Name) and \
            func.value.id in targets:
        return None if call.args else "forward"
    name: Optional[str] = dotted_name(func)
    if not name or cix.qualify(name) != "torch.compile" or not call.args:
        return None
    what = call.args[0]
    if isinstance(what, ast.Name) and what.id in targets:
        return "forward"
    if isinstance(what, ast.Attribute) and isinstance(what.value, ast.Name) and what.value.id in targets:
        return what.attr
    return None
