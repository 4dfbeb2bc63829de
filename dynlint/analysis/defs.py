"""One def at a time: the project's defs parsed on demand for the frame model (analysis/frames.py), and what it
asks of one def's `ast` alone (the names an assignment binds, a parameter's default, where a value is returned
or unpacked, the call node of a call site)."""
from __future__ import annotations

import ast
import textwrap
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Dict, List, Optional, Set, Tuple

from dynlint.linter.index import CallSite, dotted_name
from dynlint.linter.project import FuncRef, Project

# parsed defs kept at once: enough for a frame, its callers and their classes; a bound on the memory this pass
# adds (the engine forks its check workers after it, and they inherit the pages)
KEPT_DEFS = 256


def _keep(memo: OrderedDict, key, value, most: int = 0) -> None:
    """Remember `value`, forgetting the least recently used entries past `most` (KEPT_DEFS)."""
    memo[key] = value
    while len(memo) > (most or KEPT_DEFS):
        memo.popitem(last=False)


def bound_names(target: ast.expr, value: ast.expr) -> List[Tuple[str, ast.expr]]:
    """The names an assignment binds, each with its value: `x = v` gives v; `a, b = v` gives `v[0]` and
    `v[1]` (made here, at v's position)."""
    if isinstance(target, ast.Name):
        return [(target.id, value)]
    if isinstance(target, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in target.elts):
        return [(e.id, ast.copy_location(ast.Subscript(value, ast.Constant(k), ast.Load()), value))
                for k, e in enumerate(target.elts) if isinstance(e, ast.Name)]
    return []


def loop_targets(node: ast.AST) -> Set[str]:
    names: Set[str] = set()
    for gen in getattr(node, "generators", []):
        names |= {n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
    if isinstance(node, ast.For):
        names |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    return names


def is_training(test: ast.expr) -> bool:
    """Is the test `self.training`?"""
    return isinstance(test, ast.Attribute) and test.attr == "training" and isinstance(test.value, ast.Name) and \
        test.value.id == "self"


def param_defaults(args: ast.arguments) -> Dict[str, ast.expr]:
    """Each parameter's default expression, by name."""
    positional = args.posonlyargs + args.args
    out = dict(zip([a.arg for a in positional][len(positional) - len(args.defaults):], args.defaults))
    out.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    return out


def after_short_circuit(test: ast.expr, line: int, column: int) -> bool:
    """Is the position inside an operand after the first of an `and`/`or` in the test?"""
    for node in ast.walk(test):
        if isinstance(node, ast.BoolOp):
            for operand in node.values[1:]:
                if (operand.lineno, operand.col_offset) <= (line, column) <= (
                        operand.end_lineno or operand.lineno, operand.end_col_offset or 0):
                    return True
    return False


def value_kind(expr: ast.expr) -> str:
    """What an expression built from a loop variable gives: "bool" (a comparison), "int" (the variable, or
    arithmetic on it), "value" (anything else: a config list indexed by it)."""
    if isinstance(expr, (ast.Compare, ast.BoolOp)) or (isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not)):
        return "bool"
    if isinstance(expr, ast.Name) or (isinstance(expr, ast.BinOp) and not isinstance(expr.op, ast.Div)):
        return "int"
    return "value"


def body_nodes(fdef: ast.AST):
    """The nodes of a def's own body (not of the functions and classes defined in it)."""
    stack = list(ast.iter_child_nodes(fdef))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def host_call(value: ast.expr) -> bool:
    """`t.tolist()`, `t.item()`, `int(t)` / `float(t)` / `bool(t)`, or `tuple(...)` / `list(...)` of one: the
    value itself is the Python value the break made."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("tuple", "list") \
            and len(value.args) == 1:
        value = value.args[0]
    if not isinstance(value, ast.Call):
        return False
    if isinstance(value.func, ast.Attribute):
        return value.func.attr in ("tolist", "item") and not value.args
    return isinstance(value.func, ast.Name) and value.func.id in ("int", "float", "bool") and len(value.args) == 1


def host_assigned_at(fdef: ast.AST, line: int) -> Optional[str]:
    """The name a statement `name = <the break's own value>` binds (see host_call)."""
    return _facts(fdef).host_names.get(line)


def returned(fdef: ast.AST, name: str) -> Set[Optional[int]]:
    """Where the def's returns hand `name` back: None for `return name`, i for the i-th of a tuple."""
    return set(_facts(fdef).returns.get(name, ()))


def unpacked(cdef: Optional[ast.AST], call: ast.Call, k: Optional[int]) -> Optional[str]:
    """The name the caller binds the returned value to: `x = f()` (k None), `a, x, b = f()` (k 1)."""
    target = _facts(cdef).assigned.get((call.lineno, call.col_offset)) if cdef is not None else None
    if target is None:
        return None
    if k is None:
        return target.id if isinstance(target, ast.Name) else None
    if isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) > k and \
            not any(isinstance(e, ast.Starred) for e in target.elts) and isinstance(target.elts[k], ast.Name):
        return target.elts[k].id
    return None


@dataclass
class _Facts:
    host_names: Dict[int, str]                        # line of a host value -> the name `name = <it>` binds
    returns: Dict[str, Set[Optional[int]]]            # name -> where the returns hand it back
    assigned: Dict[Tuple[int, int], ast.expr]         # (line, column) of an assigned value -> its one target


@lru_cache(maxsize=64)
def _facts(fdef: ast.AST) -> _Facts:
    """What the frame model asks of a def, read in one walk of its body: asked once per host value of the
    def, a walk per question made a def of n `.item()` calls cost n walks (ast nodes hash by identity)."""
    facts = _Facts({}, {}, {})
    for node in body_nodes(fdef):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            facts.assigned.setdefault((node.value.lineno, node.value.col_offset), node.targets[0])
            if isinstance(node.targets[0], ast.Name) and host_call(node.value):
                for line in range(node.value.lineno, (node.value.end_lineno or node.value.lineno) + 1):
                    facts.host_names.setdefault(line, node.targets[0].id)
        elif isinstance(node, ast.Return) and node.value is not None:
            if isinstance(node.value, ast.Name):
                facts.returns.setdefault(node.value.id, set()).add(None)
            elif isinstance(node.value, ast.Tuple):
                for i, e in enumerate(node.value.elts):
                    if isinstance(e, ast.Name):
                        facts.returns.setdefault(e.id, set()).add(i)
    return facts


def argument(call: ast.Call, param: str, index: Optional[int]) -> Optional[ast.expr]:
    """What `call` passes as `param` (positional `index`, None for a keyword-only one): its keyword, or the
    positional argument where no `*args` stands before it; None when neither."""
    expr = next((k.value for k in call.keywords if k.arg == param), None)
    if expr is None and index is not None and index < len(call.args) and \
            not any(isinstance(a, ast.Starred) for a in call.args[:index + 1]):
        expr = call.args[index]
    return expr


def param_of(gdef: Optional[ast.AST], call: ast.Call, name: str, method: bool) -> Optional[str]:
    """The parameter of the called def that the argument `name` of `call` binds (a method's `self` is not
    passed)."""
    if gdef is None:
        return None
    params = [a.arg for a in gdef.args.posonlyargs + gdef.args.args][1 if method else 0:]
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            return None
        if isinstance(arg, ast.Name) and arg.id == name:
            return params[i] if i < len(params) else None
    keywords = {a.arg for a in gdef.args.args + gdef.args.kwonlyargs}
    return next((kw.arg for kw in call.keywords if kw.arg in keywords and isinstance(kw.value, ast.Name) and
                 kw.value.id == name), None)


class Defs:
    """The project's defs, each parsed alone when the frame model first asks for it (parsing whole files was
    most of that pass's time), and what it asks of one def; the most recently used KEPT_DEFS of each kept (a
    bound on the memory). `reading`: the files read by each computation under way (the frame model keeps
    what it computed with the digests of the files it read)."""

    def __init__(self, project: Project, text: Callable[[str], Optional[str]]):
        self.project = project
        self._text = text
        self._texts: OrderedDict = OrderedDict()     # path -> its lines
        self._bound: OrderedDict = OrderedDict()     # ref -> bindings
        self._calls: OrderedDict = OrderedDict()     # ref -> {line: its calls}
        self._defs: OrderedDict = OrderedDict()       # (path, line) -> parsed def, the last KEPT_DEFS
        self.reading: List[Set[str]] = []       # the read sets of the computations under way

    def clear(self) -> None:
        """Forget every parsed def (before the check of the frames forks its workers)."""
        self._defs.clear(), self._texts.clear(), self._bound.clear(), self._calls.clear()

    def note(self, rel: str) -> None:
        """The computations under way read this file's text (each frame's facts are kept with what they read)."""
        for reads in self.reading:
            reads.add(rel)

    def _lines(self, rel: str) -> List[str]:
        if rel not in self._texts:
            text = self._text(rel)
            _keep(self._texts, rel, text.splitlines() if text is not None else [], KEPT_DEFS // 8)
        self._texts.move_to_end(rel)
        return self._texts[rel]

    def node_at(self, rel: str, start: int, end: int, kind) -> Optional[ast.AST]:
        """The def or class of lines start..end of a file, parsed alone with the file's line numbers."""
        self.note(rel)
        key = (rel, start)
        if key in self._defs:
            self._defs.move_to_end(key)
        else:
            block = textwrap.dedent("\n".join(self._lines(rel)[start - 1:end]))
            try:
                tree = ast.parse("\n" * (start - 1) + block)     # the file's line numbers
                _keep(self._defs, key, next((n for n in tree.body if isinstance(n, kind)), None))
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                _keep(self._defs, key, None)    # (a string at column 0 inside it: not dedented; not analysed)
        return self._defs[key]

    def definition(self, ref: FuncRef):
        """The def of a project function (None where it does not parse alone)."""
        fn = self.project.function(ref)
        return self.node_at(ref[0], fn.def_line, fn.end, (ast.FunctionDef, ast.AsyncFunctionDef))

    def call(self, caller: FuncRef, site: CallSite) -> Tuple[Optional[ast.Call], bool]:
        """The call node of a call site, and whether a loop of the caller runs it."""
        self.note(caller[0])
        if caller not in self._calls:
            by_line: Dict[int, List[Tuple[ast.Call, bool]]] = {}
            fdef = self.definition(caller)
            stack = [(fdef, False)] if fdef is not None else []
            while stack:
                node, loop = stack.pop()
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                        continue
                    if isinstance(child, ast.Call):
                        by_line.setdefault(child.lineno, []).append((child, loop))
                    stack.append((child, loop or isinstance(child, (ast.For, ast.While, ast.comprehension))))
            _keep(self._calls, caller, by_line)
        self._calls.move_to_end(caller)
        found = sorted(self._calls[caller].get(site.line, ()), key=lambda c: c[0].col_offset)
        want = {"name": site.target, "self": f"self.{site.target}", "super": f"super().{site.target}",
                "element": site.target.partition(".")[2]}.get(site.kind)
        matching = []
        for call, loop in found:
            func = call.func.value if isinstance(call.func, ast.Subscript) else call.func
            if site.kind == "element":      # `self.filters[i].apply(x)`, `f.apply(x)` over `self.filters`
                if isinstance(call.func, ast.Attribute) and call.func.attr == want:
                    matching.append((call, loop))
            elif dotted_name(func) == want or (site.kind == "self" and isinstance(func, ast.Name)):
                matching.append((call, loop))
        # two calls of it on one line: the one with the site's arguments
        same = [(c, lp) for c, lp in matching if len(c.args) == len(site.args) and
                set(site.kwargs) <= {k.arg for k in c.keywords}]
        return (same or matching or [(None, False)])[0]

    def bindings(self, ref: FuncRef):
        """(parameters, name -> the values assigned to it, loops as (first line, last line, names assigned in
        it)) of a function: one walk of its def, shared by every question about it."""
        self.note(ref[0])
        if ref not in self._bound:
            fdef = self.definition(ref)
            params: Set[str] = set()
            values: Dict[str, List[ast.expr]] = {}
            loops = []
            if fdef is not None:
                params = {a.arg for a in ast.walk(fdef.args) if isinstance(a, ast.arg)}
                for n in ast.walk(fdef):
                    if isinstance(n, ast.Assign):
                        for t in n.targets:
                            for name, value in bound_names(t, n.value):
                                values.setdefault(name, []).append(value)
                    elif isinstance(n, (ast.For, ast.While)):
                        names = {name for a in ast.walk(n) if isinstance(a, ast.Assign) for t in a.targets
                                 for name, _ in bound_names(t, a.value) if not isinstance(a.value, ast.Constant)}
                        loops.append((n.lineno, n.end_lineno or n.lineno, names))
            _keep(self._bound, ref, (params, values, loops))
        self._bound.move_to_end(ref)
        return self._bound[ref]
