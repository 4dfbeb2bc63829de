"""Frames of their own: the functions Dynamo compiles separately because something they run breaks the graph.

When a function called from traced code breaks the graph (itself, or anything it calls), Dynamo does not
inline it into its caller's graph: the caller's graph ends at the call, the function runs, and Dynamo
compiles the function's own frame when it starts, with guards on what that frame reads: its arguments, the
attributes of `self`. A function entered several times per call of the model (every layer's `forward`, a
helper called from two places) then compiles again whenever what it reads differs from the last entry: a
layer index (`self.layer_idx`, a new value for every layer: a recompile per layer, until `recompile_limit`
makes the rest run eagerly), a flag that differs between layers, an argument that is None for the first
layer and a tensor for the others, a flag the frame itself sets on an object every layer shares.

Measured on torch 2.13 (bench/guards.py, "frame" rows of docs/guards.md). This module finds those functions
from the break findings of the check pass and says, per frame, what differs between its entries; the rule
that reports them is DYN509 (rules/recompiles.py).
"""
from __future__ import annotations

import ast
from collections import deque
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, Optional, Set, Tuple

from dynlint.analysis.names import SKIPS_FRAME
from dynlint.core.index import CallSite, dotted_name
from dynlint.core.project import FuncRef, Project


@dataclass(frozen=True)
class Frame:
    """What differs between the entries of one function that Dynamo compiles as a frame of its own."""
    why: Tuple[str, int, bool]                  # the break that makes it a frame: (path, line, in training only)
    per_instance: Tuple[Tuple[str, str], ...]   # (attribute of self, "int" | "bool" | "value") set per instance
    none_or_value: Tuple[Tuple[str, int], ...]  # (parameter, line of a call) None at some entries, not at others
    repeated: bool                              # entered more than once per call (a layer among many)
    ints: Tuple[Tuple[str, int], ...] = ()      # (parameter, line of a call) int constants that differ
    via: str = ""                               # not a frame itself: inlined into this frame function


def _loop_targets(node: ast.AST) -> Set[str]:
    names: Set[str] = set()
    for gen in getattr(node, "generators", []):
        names |= {n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
    if isinstance(node, ast.For):
        names |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    return names


# methods that may return None: a value from them is not known to be one
MAYBE_NONE = frozenset({"get", "pop", "setdefault", "getattr", "forward", "__call__"})


def _training(test: ast.expr) -> bool:
    return isinstance(test, ast.Attribute) and test.attr == "training" and isinstance(test.value, ast.Name) and \
        test.value.id == "self"


def _value_kind(expr: ast.expr) -> str:
    """What an expression built from a loop variable gives: "bool" (a comparison), "int" (the variable, or
    arithmetic on it), "value" (anything else: a config list indexed by it)."""
    if isinstance(expr, (ast.Compare, ast.BoolOp)) or (isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not)):
        return "bool"
    if isinstance(expr, ast.Name) or (isinstance(expr, ast.BinOp) and not isinstance(expr.op, ast.Div)):
        return "int"
    return "value"


class Frames:
    """The frame model of one run: `find` gives each frame function and what differs between its entries."""

    def __init__(self, project: Project, regions: Iterable[FuncRef], text: Callable[[str], Optional[str]],
                 edges: Callable):
        """edges(project, ref, nested): the region analysis's call graph (regions.call_edges)."""
        self.project = project
        self._edges = edges
        self.regions = set(regions)
        self._text = text
        self._trees: Dict[str, Optional[ast.Module]] = {}
        self._defs: Dict[Tuple[str, int], Optional[ast.AST]] = {}
        self._held: Optional[Dict[Tuple[str, str], List[Tuple[str, str]]]] = None
        self._scanned: Dict[Tuple[str, str], Dict[Tuple[str, str], List[Dict[str, str]]]] = {}
        self._multi: Dict[Tuple[str, str], bool] = {}

    # ---- sources ------------------------------------------------------------------------------------------
    def tree(self, rel: str) -> Optional[ast.Module]:
        if rel not in self._trees:
            text = self._text(rel)
            try:
                self._trees[rel] = ast.parse(text) if text is not None else None
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._trees[rel] = None
        return self._trees[rel]

    def node_at(self, rel: str, line: int, kind=(ast.FunctionDef, ast.AsyncFunctionDef)) -> Optional[ast.AST]:
        """The def (or class) starting at `line` of a file."""
        key = (rel, line)
        if key not in self._defs:
            tree = self.tree(rel)
            self._defs[key] = next((n for n in ast.walk(tree) if isinstance(n, kind) and n.lineno == line), None) \
                if tree else None
        return self._defs[key]

    def definition(self, ref: FuncRef):
        return self.node_at(ref[0], self.project.function(ref).def_line)

    # ---- the frames ---------------------------------------------------------------------------------------
    def find(self, breaks: Iterable) -> Dict[FuncRef, Frame]:
        """breaks: the check pass's graph-break findings (`path`, `line`, `message`)."""
        project = self.project
        frames: Dict[FuncRef, Tuple[str, int]] = {}
        skipped: Dict[FuncRef, Tuple[str, int]] = {}      # run eagerly: what they call starts frames
        queue = deque()
        found = []
        for f in sorted(breaks, key=lambda f: (f.path, f.line)):
            ix = project.by_path.get(f.path)
            if ix is None:
                continue
            inner = [(fn.start, q) for q, fn in ix.functions.items() if fn.def_line < f.line <= fn.end]
            if not inner:
                continue
            ref = (f.path, max(inner)[1])
            runs = self._runs(ref, f.line) if ref in self.regions else None
            if runs:
                found.append((runs == "training", ref, f))
        for training, ref, f in sorted(found, key=lambda t: t[0]):     # breaks every run reaches first
            why = (f.path, f.line, training)
            if SKIPS_FRAME in f.message:
                skipped.setdefault(ref, why)
            if ref not in frames:
                frames[ref] = why
                queue.append(ref)
        callers: Dict[FuncRef, List[Tuple[FuncRef, CallSite]]] = {}
        nested: Dict[str, Dict[str, List[str]]] = {}
        for ref in self.regions:
            for site, callee in self._edges(project, ref, nested):
                if callee in self.regions and callee != ref:
                    callers.setdefault(callee, []).append((ref, site))
        while queue:        # a caller whose call runs a frame breaks there too: a frame of its own
            ref = queue.popleft()
            for caller, site in callers.get(ref, ()):
                runs = self._runs(caller, site.line) if site is not None and caller not in frames else None
                if runs:
                    path, line, training = frames[ref]
                    frames[caller] = (path, line, training or runs == "training")
                    queue.append(caller)
        # A function that breaks is entered as a frame from every traced call of it (the caller's graph ends at
        # the call). One that does not is inlined wherever traced code calls it, and entered as a frame only
        # from the functions Dynamo runs eagerly (skipped): those calls are its entries.
        eager: Dict[FuncRef, Tuple[Tuple[str, int], List[Tuple[FuncRef, CallSite]]]] = {}
        nested = {}
        for ref, why in skipped.items():
            for site, callee in self._edges(project, ref, nested):
                if site is not None and callee in self.regions and callee not in frames:
                    eager.setdefault(callee, (why, []))[1].append((ref, site))
        out: Dict[FuncRef, Frame] = {}
        todo = [(ref, why, [(c, s) for c, s in callers.get(ref, ()) if s is not None], False)
                for ref, why in frames.items()]
        todo += [(ref, why, entries, True) for ref, (why, entries) in eager.items()]
        for ref, why, entries, eager_only in todo:
            if not entries:
                continue            # a root: entered from outside traced code, with the user's values
            frame = self._frame(ref, why, entries, eager_only)
            if frame.per_instance or frame.none_or_value or frame.repeated or frame.ints:
                out[ref] = frame
        # what a frame entered once per layer calls is inlined into it: its reads are that frame's guards
        inlined: Dict[FuncRef, Frame] = {}
        for ref, frame in sorted(out.items()):
            if not frame.repeated or frame.via:
                continue
            seen, level = {ref}, [ref]
            for _ in range(3):
                nxt = []
                for r in level:
                    for site, callee in self._edges(project, r, nested):
                        if callee in self.regions and callee not in seen and callee not in out and \
                                callee not in inlined:
                            seen.add(callee)
                            nxt.append(callee)
                            inlined[callee] = Frame(frame.why, (), (), True, via=ref[1])
                level = nxt
        out.update(inlined)
        return out

    def _runs(self, ref: FuncRef, line: int) -> Optional[str]:
        """"always" when every run of the function runs this line, "training" when every training step does
        (it is under `if self.training:`), else None: in a branch of any other `if` (a Python flag such as
        gradient checkpointing, or anything else), an `else`, an exception handler. Loop bodies count as run
        (a layer loop runs). A break that only some runs reach is not taken to make a frame."""
        fdef = self.definition(ref)
        if fdef is None:
            return None
        body, runs = fdef.body, "always"
        while True:
            stmt = next((s for s in body if s.lineno <= line <= (s.end_lineno or s.lineno)), None)
            if stmt is None:
                return None
            if isinstance(stmt, ast.If):
                if line <= (stmt.test.end_lineno or stmt.lineno):
                    return runs
                if not _training(stmt.test) or (stmt.orelse and line >= stmt.orelse[0].lineno):
                    return None
                body, runs = stmt.body, "training"
            elif isinstance(stmt, (ast.For, ast.While, ast.AsyncFor)) and stmt.body and line >= stmt.body[0].lineno:
                if stmt.orelse and line >= stmt.orelse[0].lineno:
                    return None
                body = stmt.body
            elif isinstance(stmt, (ast.With, ast.AsyncWith)) and line >= stmt.body[0].lineno:
                body = stmt.body
            elif isinstance(stmt, ast.Try):
                if stmt.handlers and line >= stmt.handlers[0].lineno and not (
                        stmt.finalbody and line >= stmt.finalbody[0].lineno):
                    return None
                body = stmt.body + stmt.orelse + stmt.finalbody
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                return None
            else:
                return runs

    def _frame(self, ref: FuncRef, why: Tuple[str, int], entries: List[Tuple[FuncRef, CallSite]],
               eager_only: bool) -> Frame:
        fn = self.project.function(ref)
        per_instance: Tuple[Tuple[str, str], ...] = ()
        repeated = False
        if fn.cls:
            per_instance = tuple(sorted(self._per_instance(ref[0], fn.cls).items()))
            repeated = self._is_multi(ref[0], fn.cls)
        calls = [(c, s, self._call(c, s)) for c, s in entries]
        repeated = repeated or any(loop for _, _, (_, loop) in calls)
        none_or_value, ints = self._arguments(ref, calls, eager_only)
        return Frame(why, per_instance, none_or_value, repeated, ints)

    # ---- arguments: None at one entry, a value at another ------------------------------------------------------
    def _call(self, caller: FuncRef, site: CallSite) -> Tuple[Optional[ast.Call], bool]:
        """The call node of a call site, and whether a loop of the caller runs it."""
        fdef = self.definition(caller)
        if fdef is None:
            return None, False
        found: List[Tuple[ast.Call, bool]] = []

        def walk(node, loop: bool) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                    continue
                if isinstance(child, ast.Call) and child.lineno == site.line:
                    found.append((child, loop))
                walk(child, loop or isinstance(child, (ast.For, ast.While, ast.comprehension)))
        walk(fdef, False)
        want = {"name": site.target, "self": f"self.{site.target}", "super": f"super().{site.target}"}[site.kind]
        matching = []
        for call, loop in found:
            func = call.func.value if isinstance(call.func, ast.Subscript) else call.func
            if dotted_name(func) == want or (site.kind == "self" and isinstance(func, ast.Name)):
                matching.append((call, loop))
        # two calls of it on one line: the one with the site's arguments
        same = [(c, lp) for c, lp in matching if len(c.args) == len(site.args) and
                set(site.kwargs) <= {k.arg for k in c.keywords}]
        return (same or matching or [(None, False)])[0]

    def _arguments(self, ref: FuncRef, calls, eager_only: bool):
        """The parameters that differ between entries: None at one and a value at another (tested `is None` in
        the function), and int constants (read in it). Entries from different callers count for a function
        that breaks (each traced call of it is an entry); for one entered from eager callers only, just the
        calls of one caller (different callers may reach it inlined, not as an entry)."""
        fdef = self.definition(ref)
        if fdef is None:
            return (), ()
        args = fdef.args
        positional = args.posonlyargs + args.args
        defaults = dict(zip([a.arg for a in positional][len(positional) - len(args.defaults):], args.defaults))
        defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
        names = [a.arg for a in positional]
        if self.project.function(ref).cls and names:
            names = names[1:]           # self: calls through an instance do not pass it
        every = names + [a.arg for a in args.kwonlyargs]
        tested = {n.left.id for n in ast.walk(fdef) if isinstance(n, ast.Compare) and isinstance(n.left, ast.Name)
                  and len(n.ops) == 1 and isinstance(n.ops[0], (ast.Is, ast.IsNot))
                  and isinstance(n.comparators[0], ast.Constant) and n.comparators[0].value is None}
        read = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        nones, ints = [], []
        for p in every:
            if p not in read:
                continue
            seen: Dict[Tuple, int] = {}
            for caller, site, (call, _) in calls:
                state = self._passes(caller, call, p, names.index(p) if p in names else None, defaults.get(p))
                if state:
                    seen.setdefault((caller if eager_only else None, state), site.line)
            if p in tested:
                first = [line for (_, state), line in seen.items() if state == "none first"]
                both = [line for (c, state), line in seen.items() if state == "none" and (c, "value") in seen]
                if first or both:
                    nones.append((p, min(first or both)))
            values = {}
            for (c, state), line in seen.items():
                if isinstance(state, tuple):
                    values.setdefault(c, {}).setdefault(state[1], line)
            if any(len(v) > 1 for v in values.values()):
                ints.append((p, min(line for v in values.values() if len(v) > 1 for line in v.values())))
        return tuple(nones), tuple(ints)

    def _passes(self, caller: FuncRef, call: Optional[ast.Call], param: str, index: Optional[int],
                default: Optional[ast.expr]) -> Optional[str]:
        """"none", "value", "none first" (a name that is None on a loop's first iteration, then set),
        ("int", n) for an int constant, or None (not known) for what a call passes as `param`."""
        if call is None:
            return None
        expr = next((k.value for k in call.keywords if k.arg == param), None)
        if expr is None and index is not None and index < len(call.args):
            if any(isinstance(a, ast.Starred) for a in call.args[:index + 1]):
                return None
            expr = call.args[index]
        if expr is None:
            if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
                return None
            expr = default
            if not isinstance(expr, ast.Constant):
                return None
        if isinstance(expr, ast.Constant):
            if type(expr.value) is int:
                return ("int", expr.value)
            return "none" if expr.value is None else "value"
        if isinstance(expr, ast.Name):
            return self._name_state(caller, expr.id, call)
        return "value" if self._tensor(caller, expr) else None

    def _name_state(self, caller: FuncRef, name: str, call: ast.Call) -> Optional[str]:
        fdef = self.definition(caller)
        if fdef is None or name in {a.arg for a in ast.walk(fdef.args) if isinstance(a, ast.arg)}:
            return None         # a parameter of the caller: whatever its callers pass
        values = [n.value for n in ast.walk(fdef) if isinstance(n, ast.Assign)
                  for t in n.targets if isinstance(t, ast.Name) and t.id == name]
        nones = [v for v in values if isinstance(v, ast.Constant) and v.value is None]
        if not values or len(nones) == len(values):
            return None if not values else "none"
        if nones:
            for loop in ast.walk(fdef):
                if isinstance(loop, (ast.For, ast.While)) and loop.lineno < call.lineno <= (loop.end_lineno or 0):
                    sets = [n for n in ast.walk(loop) if isinstance(n, ast.Assign)
                            for t in n.targets if isinstance(t, ast.Name) and t.id == name]
                    before = [v for v in nones if v.lineno < loop.lineno]
                    if sets and before and not any(isinstance(s.value, ast.Constant) for s in sets):
                        return "none first"
            return None
        return "value" if all(self._tensor(caller, v) for v in values) else None

    def _tensor(self, ref: FuncRef, expr: ast.expr) -> bool:
        """Surely not None: arithmetic, a `torch.*` call, a tensor method (`x.view(...)`), a constructor."""
        if isinstance(expr, ast.BinOp):
            return True
        if not isinstance(expr, ast.Call):
            return False
        name = dotted_name(expr.func) or ""
        if self.project.by_path[ref[0]].qualify(name).startswith("torch."):
            return True
        if name.startswith("self.") and name.count(".") == 1:
            fn = self.project.function(ref)
            method = self.project.method(ref[0], fn.cls, name[5:]) if fn.cls else None
            mdef = self.definition(method) if method else None
            returns = [n.value for n in ast.walk(mdef) if isinstance(n, ast.Return)] if mdef else []
            return bool(returns) and all(r is not None and not (isinstance(r, ast.Constant) and r.value is None)
                                         and not isinstance(r, ast.IfExp) for r in returns)
        return isinstance(expr.func, ast.Attribute) and expr.func.attr not in MAYBE_NONE and \
            not name.startswith("self.")

    # ---- instances: attributes set from constructor arguments that differ between them ----------------------
    def _holders(self) -> Dict[Tuple[str, str], List[Tuple[str, str]]]:
        """(path, class) -> the classes whose attributes hold instances of it (from the index: no parsing)."""
        if self._held is None:
            self._held = {}
            for rel, ix in self.project.by_path.items():
                for holder in ix.classes.values():
                    for ctors in holder.attrs.values():
                        for ctor in ctors:
                            r = self.project.resolve(ix, ctor)
                            if r and r[0] == "class":
                                key = (r[1][0], r[1][1].name)
                                if (rel, holder.name) != key:
                                    self._held.setdefault(key, []).append((rel, holder.name))
        return self._held

    def _constructions(self, key: Tuple[str, str]) -> List[Dict[str, str]]:
        """The constructions of a class inside a loop or a comprehension of a class that holds it: for each,
        {argument: kind} of the arguments built from the loop variable (positions as "0", "1", ...)."""
        out: List[Dict[str, str]] = []
        for rel, holder in sorted(set(self._holders().get(key, ()))):
            if (rel, holder) not in self._scanned:
                self._scanned[(rel, holder)] = self._scan(rel, holder)
            out += self._scanned[(rel, holder)].get(key, [])
        return out

    def _scan(self, rel: str, holder: str) -> Dict[Tuple[str, str], List[Dict[str, str]]]:
        ix = self.project.by_path[rel]
        tree = self.tree(rel)
        node = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == holder), None) if tree else None
        built: Dict[Tuple[str, str], List[Dict[str, str]]] = {}

        def walk(n, loops: Set[str]) -> None:
            for child in ast.iter_child_nodes(n):
                inner = loops | _loop_targets(child)
                if isinstance(child, ast.Call) and inner:
                    name = dotted_name(child.func)
                    r = self.project.resolve(ix, name) if name else None
                    if r and r[0] == "class":
                        varying = {}
                        for i, a in enumerate(child.args):
                            if {x.id for x in ast.walk(a) if isinstance(x, ast.Name)} & inner:
                                varying[str(i)] = _value_kind(a)
                        for k in child.keywords:
                            if k.arg and {x.id for x in ast.walk(k.value) if isinstance(x, ast.Name)} & inner:
                                varying[k.arg] = _value_kind(k.value)
                        built.setdefault((r[1][0], r[1][1].name), []).append(varying)
                walk(child, inner)
        if node is not None:
            walk(node, set())
        return built

    def _is_multi(self, path: str, cls: str, depth: int = 0) -> bool:
        """Are there several instances of the class: built in a loop, or held by a class that has several?"""
        key = (path, cls)
        if key not in self._multi:
            self._multi[key] = False
            self._multi[key] = bool(self._constructions(key)) or (depth < 4 and any(
                self._is_multi(rel, holder, depth + 1) for rel, holder in self._holders().get(key, ())))
        return self._multi[key]

    def _per_instance(self, path: str, cls: str) -> Dict[str, str]:
        """Attributes `__init__` sets from constructor arguments that differ between instances -> their kind."""
        sites = self._constructions((path, cls))
        ref = self.project.method(path, cls, "__init__")
        if not sites or ref is None:
            return {}
        init = self.definition(ref)
        if init is None:
            return {}
        params = [a.arg for a in init.args.posonlyargs + init.args.args][1:]
        varying: Dict[str, str] = {}
        for args in sites:
            for key, kind in args.items():
                name = params[int(key)] if key.isdigit() and int(key) < len(params) else key
                varying.setdefault(name, kind)
        out: Dict[str, str] = {}
        for n in ast.walk(init):
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Attribute) and \
                    isinstance(n.targets[0].value, ast.Name) and n.targets[0].value.id == "self":
                used = {x.id for x in ast.walk(n.value) if isinstance(x, ast.Name)} & set(varying)
                if not used or any(isinstance(x, (ast.Call, ast.Lambda)) for x in ast.walk(n.value)):
                    continue            # a submodule built per layer, not a value the frame is guarded on
                if isinstance(n.value, ast.Name):
                    kind = varying[n.value.id]
                elif isinstance(n.value, (ast.Compare, ast.BoolOp)) or (
                        isinstance(n.value, ast.UnaryOp) and isinstance(n.value.op, ast.Not)):
                    kind = "bool"
                else:
                    kind = "value"
                out.setdefault(n.targets[0].attr, kind)
        return out
