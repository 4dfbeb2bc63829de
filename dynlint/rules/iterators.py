"""DYN611: iterator objects made outside compiled code and stepped inside it."""
from __future__ import annotations

import ast
import functools
from typing import Dict

import libcst as cst

from dynlint.analysis.guard_lines import last_binding
from dynlint.linter.index import dotted_name
from dynlint.linter.rule import Example, register
from dynlint.rules.common import TorchRule


# Builtins whose result is an iterator object (not a container): passed into a compiled function from outside,
# Dynamo cannot step it.
ITERATOR_MAKERS = frozenset({"iter", "map", "filter", "zip", "enumerate", "reversed"})
ITERATING_CALLS = frozenset({"next", "list", "tuple", "sorted", "set", "sum", "dict"})
# The methods of torch's nn.Module that are generators (they `yield`, torch/nn/modules/module.py):
# `model.parameters()` handed to a compiled function is an iterator object made outside it
MODULE_GENERATORS = frozenset({"parameters", "named_parameters", "buffers", "named_buffers", "children",
                               "named_children", "modules", "named_modules"})


def iterators_passed_in(ctx) -> Dict[str, Dict[str, int]]:
    """An analysis: compiled function qualname (`f`, `Model.forward`) -> {parameter: line of a call in this file
    that passes it an iterator
    object} (a generator expression, `iter(...)` / `map(...)` / `zip(...)` ..., `itertools.*(...)`, a dict
    view, a call of a generator function of the file, or of an nn.Module's: `model.parameters()`). Read from the
    whole file (a unit holds only part)."""
    source = ctx.source or ""
    if "compile" not in source:         # nothing compiled here: no parse
        return {}
    return _iterators_passed_in(source, ctx.index.qualify if ctx.index else (lambda name: name))


@functools.lru_cache(maxsize=8)
def _iterators_passed_in(source: str, qualify) -> Dict[str, Dict[str, int]]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    generators = {name for name, d in defs.items() if _yields(d)}
    # the compiled module classes' forward, by qualname
    defs.update({f"{c.name}.forward": f for c in tree.body if isinstance(c, ast.ClassDef) for f in c.body
                 if isinstance(f, ast.FunctionDef) and f.name == "forward"})
    found: Dict[str, Dict[str, int]] = {}
    _passed(tree, tree, defs, _compiled_functions(tree, defs, qualify), generators, qualify, "", found)
    for outer in tree.body:
        # a function compiled where it is defined (`def fn` ... `opt = torch.compile(fn)` ... `opt(...)` in one
        # test function): keyed by its qualname, `test_x.fn`
        local = {n.name: n for n in outer.body if isinstance(n, ast.FunctionDef)} \
            if isinstance(outer, ast.FunctionDef) else {}
        if local:
            _passed(tree, outer, local, _compiled_functions(outer, local, qualify), generators, qualify,
                    f"{outer.name}.", found)
    return found


def _passed(tree: ast.Module, scope: ast.AST, defs, compiled, generators, qualify, prefix: str, found) -> None:
    """`iterators_passed_in` for the calls in `scope` of the names `compiled` maps to functions of `defs`."""
    for call in ast.walk(scope):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in compiled):
            continue
        target = compiled[call.func.id]
        fn = defs[target]
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args][1 if "." in target else 0:]
        bound = [(params[i], a) for i, a in enumerate(call.args) if i < len(params) and
                 not isinstance(a, ast.Starred)] + [(k.arg, k.value) for k in call.keywords if k.arg]
        for name, value in bound:
            if isinstance(value, ast.Name):         # `stream = iter(batches)` before the call
                value = last_binding(tree, value.id, call.lineno) or value
            if _iterator_object(value, generators, qualify):
                found.setdefault(prefix + target, {}).setdefault(name, call.lineno)


_COMPILE = ("torch.compile", "torch._dynamo.optimize")


def _compiled_functions(tree: ast.AST, defs, qualify) -> Dict[str, str]:
    """Name called -> the function of the file it runs compiled: `@torch.compile def f` (f -> f), `g =
    torch.compile(f)` (g -> f) and `m = torch.compile(Model(...))` (m -> Model.forward), at module level or in a
    function."""
    compiled = {name: name for name, d in defs.items() if "." not in name and
                any(qualify(dotted_name(d2.func if isinstance(d2, ast.Call) else d2) or "") in _COMPILE
                    for d2 in d.decorator_list)}
    for n in ast.walk(tree):
        if not (isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and
                isinstance(n.value, ast.Call) and qualify(dotted_name(n.value.func) or "") in _COMPILE and
                n.value.args):
            continue
        arg = n.value.args[0]
        while isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute):
            arg = arg.func.value                    # `Model(...).eval()`, `.to(device)`
        if isinstance(arg, ast.Name) and arg.id in defs:
            compiled[n.targets[0].id] = arg.id
        elif isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and f"{arg.func.id}.forward" in defs:
            compiled[n.targets[0].id] = f"{arg.func.id}.forward"
    return compiled


def _yields(fn: ast.AST) -> bool:
    """A generator function: a `yield` in its own body (not in a function nested in it)."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(n))
    return False


def _iterator_object(node: ast.AST, generators, qualify) -> bool:
    if isinstance(node, ast.GeneratorExp):
        return True
    if not isinstance(node, ast.Call):
        return False
    if isinstance(node.func, ast.Name) and node.func.id in generators:
        return True
    name = qualify(dotted_name(node.func) or "")
    if name in ITERATOR_MAKERS or name.startswith("itertools."):
        return True
    if isinstance(node.func, ast.Attribute) and node.func.attr in MODULE_GENERATORS:
        return True
    return isinstance(node.func, ast.Attribute) and node.func.attr in ("items", "values", "keys") and \
        not node.args and not node.keywords


@register
class IteratorPassedToCompiledCode(TorchRule):
    """Checks for a compiled function iterating a parameter that its callers in the same file pass an iterator
    object: a generator, `iter(...)`, `map(...)`, `zip(...)`, `enumerate(...)`, an `itertools` iterator or a dict
    view."""
    code = "DYN611"
    name = "iterator-passed-to-compiled-code"
    message = "`{param}` is an iterator made outside the compiled code (line {line}): Dynamo cannot step it and breaks the graph here"
    fix = "Pass a list or tuple (`list(it)` before the call), or make the iterator inside the compiled function"
    gb_types = ("missing tp_iter", "Missing tp_iternext")
    why = """
        Dynamo traces iteration over lists, tuples, dicts, ranges and iterators it created itself; an iterator
        object that exists before the frame starts (a generator, a `map`/`zip`/`enumerate` object, a dict view)
        has C-level state it cannot model. Each `next()` or `list()` of it breaks the graph (`missing tp_iter`,
        `Missing tp_iternext`) and the code after it resumes, where the next one breaks again; a `for` loop
        over it makes Dynamo skip the rest of the frame, so nothing after that is traced.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def total(parts):
            out = 0
            for p in parts:
                out = out + p.sum()
            return out

        def run(xs):
            return total(x * 2 for x in xs)
    """, "run([torch.ones(3), torch.ones(3)])"), Example("""
        import torch

        def test_generator_argument():
            def fn(batches, acc):
                for b in batches:               # a generator made by the caller
                    acc = acc + b.mean(0)
                return acc

            opt = torch.compile(fn)
            return opt((torch.ones(2, 3) for _ in range(3)), torch.zeros(3))
    """, "test_generator_argument()"), Example("""
        import torch

        def batches(xs):
            for x in xs:
                yield x * 2

        def first_two(stream):
            a = next(stream)
            return a + next(stream)

        fast = torch.compile(first_two)

        def run(xs):
            return fast(batches(xs))
    """, "run([torch.ones(3), torch.ones(3)])"), Example("""
        import torch
        from torch import nn

        def grad_norm(params):
            grads = [p.grad for p in params if p.grad is not None]
            return torch.stack([g.norm() for g in grads]).norm()

        report = torch.compile(grad_norm)

        def run():
            model = nn.Linear(4, 2)
            model(torch.randn(3, 4)).sum().backward()
            return report(model.parameters())
    """, "run()")]
    VALID = [Example("""
        import torch

        @torch.compile
        def total(parts):
            out = 0
            for p in parts:
                out = out + p.sum()
            return out

        def run(xs):
            return total([x * 2 for x in xs])
    """, "run([torch.ones(3), torch.ones(3)])")]

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._skipped = set()

    def visit_For(self, node: cst.For) -> None:
        self._check(node.iter, skips=True)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._check(node.iter, skips=True)          # `[p.grad for p in params]`: a loop of its own frame

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value in ITERATING_CALLS and node.args and \
                not node.args[0].keyword:
            self._check(node.args[0].value, skips=False)

    def _check(self, value: cst.BaseExpression, skips: bool) -> None:
        fn = self.ctx.functions[-1] if self.ctx.functions else None
        if not (isinstance(value, cst.Name) and isinstance(fn, cst.FunctionDef)):
            return                      # (a function nested in the compiled one has a qualname of its own)
        passed = self.ctx.analysis(iterators_passed_in).get(self.ctx.qualname, {})
        param = value.value
        # every use that steps one breaks (`next(it)`, `list(it)`: the code after it resumes and breaks again at
        # the next); a `for` over one skips the rest of the frame: nothing after it is traced
        if param in passed and fn not in self._skipped:
            if skips:
                self._skipped.add(fn)
            self.report(value, param=param, line=passed[param])
