"""What the other files of the project pass to a function of this one (`CallerKinds`' part for callers in other
files): Dynamo inlines a call across files as it does within one, so `gate(h, ts[0])` in `model.py` makes
`helpers.gate`'s `t` a tensor as surely as a call beside it would. Each calling file is judged by an analysis of
its own (`Tensors` over that file), a few files deep."""
from __future__ import annotations

import re
from typing import Dict, Iterator, List, Optional, Set, Tuple

import libcst as cst

from dynlint.analysis.tensors.kinds import TENSOR, UNKNOWN, VALUE
from dynlint.analysis.tensors.syntax import bound_arguments

DEPTH = 2           # callers' callers in other files are judged this many files deep
MOST_FILES = 16     # a function more files import is a library's utility: what they pass is not judged


def foreign_kinds(tensors, name: str, positions: List[str], plain: List[str]) -> Optional[Dict[str, List[str]]]:
    """Parameter -> the kinds of what every call of the top-level function `name` (of the file `tensors`
    judges) in another file passes to it; None when some use cannot be read: a file that names it other than in
    calls, a call at a module's top level or with `*args` / `**kw`, a caller not plain enough to read, no way
    to read other files' text, too many files deep, or more than `MOST_FILES` files import it."""
    ctx = tensors.ctx
    project = ctx.project
    sources = getattr(project, "sources", None)
    depth = getattr(ctx, "foreign_depth", 0)
    if sources is None or depth >= DEPTH:
        return None
    users = [(rel, callee) for rel, callee in _users(project, f"{ctx.index.module}.{name}")
             if rel != ctx.index.path]
    if len(users) > MOST_FILES:
        return None
    kinds: Dict[str, List[str]] = {p: [] for p in plain}
    for rel, callee in users:
        if not _calls_in(project, rel, callee):
            if rel.endswith("__init__.py"):
                continue        # (a package's `__init__` that re-exports it: its importers come next)
            return None         # imported and not called (a decorator, handed on): called where this cannot see
        other = _analysis(tensors, rel, depth + 1, callee)
        if other is None:
            return None
        cix = other.ctx.index
        if any(_targets(cix, c.target, callee) for c in cix.module_calls):
            return None         # called where the module is imported: with what, not judged
        for q, info in cix.functions.items():
            if not any(_targets(cix, c.target, callee) for c in info.calls):
                continue
            caller = other._helper_def(info)
            if caller is None:
                return None
            if not passed_kinds(other, caller, info.cls, _calls(caller, lambda d: cix.qualify(d) == callee), positions, kinds):
                return None
    return kinds


def receiver_kinds(tensors, cls: str, method: str, positions: List[str],
                   plain: List[str]) -> Optional[Dict[str, List[str]]]:
    """Parameter -> the kinds of what calls of the method `cls.method` (of this file) pass in the other files
    that import the class, through an attribute of `self` or a name holding an instance of it (`self.scheduler.
    step(out, t, x)`): what the project builds into it, else what it is declared to hold (`__init__(self,
    scheduler: DDIMScheduler)` ... `self.register_modules(scheduler=scheduler)`), as method calls resolve in
    typed code. None when no such call is found or one of them cannot be read."""
    callers = receiver_calls(tensors, cls, method)
    if not callers:
        return None
    kinds: Dict[str, List[str]] = {p: [] for p in plain}
    for other, fdef, caller_cls, calls, _ in callers:
        if not passed_kinds(other, fdef, caller_cls, calls, positions, kinds):
            return None
    # many callers, each made its own way (a library's pipelines): one that passes a tensor has Dynamo trace the
    # method with a tensor whatever the others pass, unless one passes a Python value (then it is traced both ways)
    return {p: [TENSOR] if TENSOR in ks and VALUE not in ks else ks for p, ks in kinds.items()}


def receiver_calls(tensors, cls: str, method: str) -> Optional[List[tuple]]:
    """[(the analysis of a file, a function's def, its class, its calls of `cls.method` through what holds an
    instance, the function's index entry)] for the other files importing the class (`receiver_kinds`); None when
    none is found or one of them cannot be read."""
    ctx = tensors.ctx
    project, ix = ctx.project, ctx.index
    depth = getattr(ctx, "foreign_depth", 0)
    if getattr(project, "sources", None) is None or depth >= DEPTH:
        return None
    found = []
    for rel in sorted({rel for rel, _ in _users(project, f"{ix.module}.{cls}")} - {ix.path}):
        cix = project.by_path.get(rel)
        for info in (cix.functions.values() if cix is not None else ()):
            receivers = {("self." if c.kind == "self" else "") + c.target for c in info.calls
                         if c.kind in ("self", "name") and c.target.count(".") == 1 and
                         c.target.endswith("." + method) and _holds(project, cix, info, c, (ix.path, cls))}
            if not receivers:
                continue
            other = _file_analysis(tensors, rel, depth + 1)
            fdef = other._helper_def(info) if other is not None else None
            if fdef is None:
                return None
            found.append((other, fdef, info.cls, _calls(fdef, receivers.__contains__), info))
    return found or None


def passed_rows(tensors, cls: str, method: str, positions: List[str],
                param: str) -> Optional[List[Tuple[str, int, str]]]:
    """Where every tensor that the calls of a compiled alias (`alias_calls`) and those through what holds an
    instance (`receiver_calls`) pass as `param` is an element of a tensor a Python loop iterates (`for t in
    self.scheduler.timesteps: ... self.scheduler.step(out, t, x)`): [(file, line of the call, the loop
    variable)]; None when one of them passes anything else known (a Python value, another tensor) or none passes
    such an element."""
    found: List[Tuple[str, int, str]] = []
    callers = (alias_calls(tensors, cls, method) or []) + (receiver_calls(tensors, cls, method) or [])
    for other, fdef, caller_cls, calls, info in callers:
        for call in calls:
            arg = bound_arguments(call, positions).get(param)
            if arg is None:
                continue
            with other.within(fdef, caller_cls):
                kind, row = other.kind(arg), other.iterated_element(arg)
            if kind == VALUE or (kind == TENSOR and not row):
                return None
            where = (other.ctx.index.path, _line_in(other.ctx.source or "", info, call), arg.value) if row else None
            if where and where not in found:
                found.append(where)
    return found or None


def _line_in(source: str, info, node: cst.CSTNode) -> int:
    """The line of `node` (of the function `info`, parsed on its own) in the file: where its first line's text
    first stands in the function."""
    first = cst.Module([]).code_for_node(node).strip().splitlines()[0]
    lines = source.splitlines()
    return next((i + 1 for i in range(info.start - 1, min(info.end, len(lines))) if first in lines[i]),
                info.def_line)


def _holds(project, ix, info, call, ref) -> bool:
    """The receiver of `call` (`self.<attr>.m(...)` or `<name>.m(...)` in the function `info` of `ix`) may hold
    an instance of the class `ref` (path, name): one of the classes it holds, or is declared to (`Union[A, B]`)."""
    from dynlint.analysis.held import held_by_attribute, held_by_name
    head = call.target.partition(".")[0]
    if call.kind == "self":
        held = held_by_attribute(project, ix, info.cls, head) if info.cls in ix.classes else set()
    else:
        held = held_by_name(project, ix, info, head)
    refs = [project.resolve(ix, q) for q in held]
    return any(r and r[0] == "class" and (r[1][0], r[1][1].name) == ref for r in refs)


def passed_kinds(tensors, caller: cst.FunctionDef, cls: str, calls: List[cst.Call], positions: List[str],
                 kinds: Dict[str, List[str]]) -> bool:
    """Add to `kinds` (parameter -> kinds so far) what each of `calls`, made in `caller` (a method of `cls`, or
    "" for a function) and judged by the analysis `tensors` of its file, passes to those parameters; False when
    a call passes `*args` / `**kw` (what goes where is not known)."""
    for call in calls:
        if any(a.star == "*" for a in call.args):
            return False
        bound = bound_arguments(call, positions)
        spread = any(a.star == "**" for a in call.args)     # (binds by keyword what it names: not known)
        with tensors.within(caller, cls):
            for p in kinds:
                if p in bound:
                    kinds[p].append(tensors.kind(bound[p]))
                elif spread:
                    kinds[p].append(UNKNOWN)
    return True


def _users(project, target: str, seen: Optional[Set[str]] = None) -> Iterator[Tuple[str, str]]:
    """(file, the dotted name its calls of `target` qualify to) for every file importing `target` or its module;
    through a package's `__init__` that re-exports it, the files importing it from there too."""
    seen = seen if seen is not None else set()
    if target in seen:
        return
    seen.add(target)
    facts, module = project.facts, target.rpartition(".")[0]
    for rel in sorted(set(facts.importers.get(target, ())) | set(facts.importers.get(module, ()))):
        yield rel, target
        ix = project.by_path.get(rel)
        if ix is not None and rel.endswith("__init__.py"):
            for alias, dotted in ix.imports.items():
                if dotted == target:
                    yield from _users(project, f"{ix.module}.{alias}", seen)


def _analysis(tensors, rel: str, depth: int, target: str):
    """The analysis of another file (one per run, file and depth), or None when its text or index cannot be had
    or it names the function `target` other than in calls (handed on, stored: called where this cannot
    follow)."""
    from dynlint.linter.walker import Context, Unit     # (the walker's context, for a file no unit is checked of)
    memo = tensors._run.foreign
    if (rel, depth) not in memo:
        project = tensors.ctx.project
        ix, text = project.by_path.get(rel), project.sources(rel)
        if ix is None or text is None:
            memo[(rel, depth)] = None
        else:
            ctx = Context(Unit("", 0, 0, ()), rel, ix, project, {}, text)
            ctx.foreign_depth = depth
            memo[(rel, depth)] = ctx.analysis(type(tensors))
    other = memo[(rel, depth)]
    return other if other is not None and (not target or _only_called(other.ctx, target)) else None


def _only_called(ctx, target: str) -> bool:
    """Every mention in the file of `target` (a name imported as it, `gate`, or an attribute of its module
    imported, `helpers.gate`) is followed by a call; import lines aside."""
    module, _, name = target.rpartition(".")
    names = [re.escape(a) for a, d in ctx.index.imports.items() if d == target] + \
        [re.escape(a) + r"\s*\.\s*" + re.escape(name) for a, d in ctx.index.imports.items() if d == module]
    if not names:
        return True
    pattern = re.compile(r"(?<![\w.])(?:%s)\b" % "|".join(names))
    for line in ctx.source.splitlines():
        if line.lstrip().startswith(("from ", "import ")):
            continue
        for m in pattern.finditer(line):
            if not line[m.end():].lstrip().startswith("("):
                return False
    return True


def _targets(ix, target: str, callee: str) -> bool:
    return ix.qualify(target) == callee


def _calls_in(project, rel: str, callee: str) -> bool:
    """The file's index records a call of `callee` (or cannot be had: judged as calling it)."""
    ix = project.by_path.get(rel)
    return ix is None or any(_targets(ix, c.target, callee) for c in ix.module_calls) or \
        any(_targets(ix, c.target, callee) for f in ix.functions.values() for c in f.calls)


def _calls(fn: cst.FunctionDef, match) -> List[cst.Call]:
    """The calls in `fn` (not in functions nested in it) whose callee, written as a name or a dotted one,
    `match` accepts (`helpers.gate`, `self.sched.step`)."""
    from dynlint.linter.walker import dotted, walk
    found: List[cst.Call] = []

    def enter(node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) and node is not fn:
            return False
        if isinstance(node, cst.Call):
            d = dotted(node.func)
            if d and match(d):
                found.append(node)
        return True

    walk(fn, enter, lambda node: None)
    return found


def compiled_kinds(tensors, cls: str, method: str, positions: List[str],
                   plain: List[str]) -> Optional[Dict[str, List[str]]]:
    """Parameter -> the kinds of what the calls of `step = torch.compile(sched.step)` pass to the method `cls.method`
    of this file (a function of its top level when `cls` is ""), wherever in the project it is compiled so: the
    calls of `step` in the function that binds it, and in a function it is handed to (`sample(unet, sched,
    step)` ... `step(out, t, x)`). None when it is compiled nowhere so, or some use of such an alias cannot be
    read."""
    uses = alias_calls(tensors, cls, method)
    if uses is None:
        return None
    kinds: Dict[str, List[str]] = {p: [] for p in plain}
    for other, caller, caller_cls, calls, _ in uses:
        if not passed_kinds(other, caller, caller_cls, calls, positions, kinds):
            return None
    return kinds


def alias_calls(tensors, cls: str, method: str) -> Optional[List[tuple]]:
    """[(the analysis of a file, a function's def, its class, its calls of a compiled alias of `cls.method`, the
    function's index entry)] (`compiled_kinds`); None when it is compiled nowhere so, or some use of such an alias cannot be read."""
    from dynlint.analysis.regions import targets_of_value
    ctx = tensors.ctx
    project, ix = ctx.project, ctx.index
    depth = getattr(ctx, "foreign_depth", 0)
    if getattr(project, "sources", None) is None or depth >= DEPTH:
        return None
    ref, found = (ix.path, f"{cls}.{method}" if cls else method), []
    rels = {ix.path} | set(project.facts.importers.get(f"{ix.module}.{cls or method}", ())) | \
        set(project.facts.importers.get(ix.module, ()))
    for rel in sorted(rels):
        cix = project.by_path.get(rel)
        for q, info in (cix.functions.items() if cix is not None else ()):
            for alias, what in info.compiled.items():
                if what.rpartition(".")[2] != method and method != "forward" or \
                        ref not in targets_of_value(project, cix, info, what):     # (a module: its forward)
                    continue
                uses = _alias_uses(tensors, rel, depth, q, alias)
                if uses is None:
                    return None
                found += uses
    return found or None


def _alias_uses(tensors, rel: str, depth: int, q: str, alias: str):
    """[(the analysis of a file, a function's def, its class, the calls in it that run the compiled alias, its
    index entry)]: in `q`, which binds `alias`, and in the functions `q` hands it to by position or keyword; None
    when `alias` is used otherwise (stored, returned, handed to what cannot be resolved)."""
    project = tensors.ctx.project
    other = _file_analysis(tensors, rel, depth + 1)
    info = other.ctx.index.functions[q] if other is not None else None
    fdef = other._helper_def(info) if other is not None else None
    if fdef is None:
        return None
    calls, passed = _name_uses(fdef, alias)
    if calls is None:
        return None
    out = [(other, fdef, info.cls, calls, info)]
    for call, key in passed:
        from dynlint.linter.walker import dotted
        r = project.resolve(other.ctx.index, dotted(call.func) or "", q)
        if not r or r[0] != "function":
            return None
        grel, gq = r[1]
        g = project.by_path[grel].functions[gq]
        params = [p for p in g.params if p not in ("self", "cls")] if g.cls else list(g.params)
        param = key if isinstance(key, str) else params[key] if key < len(params) else None
        gother = _file_analysis(tensors, grel, depth + 1)
        gdef = gother._helper_def(g) if gother is not None and param in params else None
        gcalls = _name_uses(gdef, param)[0] if gdef is not None else None
        if gcalls is None or _name_uses(gdef, param)[1]:
            return None
        out.append((gother, gdef, g.cls, gcalls, g))
    return out


def _file_analysis(tensors, rel: str, depth: int):
    """The analysis of a file of the project (this one's own, or another's: `_analysis` without the check that
    it only calls a name)."""
    if rel == tensors.ctx.index.path and not tensors._within:
        return tensors
    return _analysis(tensors, rel, depth, "")


def _name_uses(fn: cst.FunctionDef, name: str):
    """(the calls of `name` in `fn`, [(a call `name` is handed to, its position or keyword)]), or (None, None)
    when `name` is used otherwise; its own binding (`step = torch.compile(...)`) aside."""
    from dynlint.linter.walker import walk
    calls: List[cst.Call] = []
    passed: List[Tuple[cst.Call, object]] = []
    stack: List[cst.CSTNode] = []
    odd: List[cst.CSTNode] = []

    def enter(node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) and node is not fn:
            if isinstance(node, cst.FunctionDef) and name in {p.name.value for p in node.params.params}:
                return False
        if isinstance(node, cst.Name) and node.value == name and stack:
            parent = stack[-1]
            if isinstance(parent, cst.Attribute) and parent.attr is node or \
                    isinstance(parent, cst.Arg) and parent.keyword is node:
                pass                    # `module.training_step`, `f(training_step=...)`: another name
            elif isinstance(parent, cst.Call) and parent.func is node:
                calls.append(parent)
            elif isinstance(parent, cst.Arg) and len(stack) > 1 and isinstance(stack[-2], cst.Call) and \
                    parent.star == "":
                call = stack[-2]
                plain_args = [a for a in call.args if a.keyword is None]
                key = parent.keyword.value if parent.keyword is not None else plain_args.index(parent)
                passed.append((call, key))
            elif not (isinstance(parent, cst.AssignTarget) or isinstance(parent, cst.Param)):
                odd.append(node)
        stack.append(node)
        return True

    def leave(node: cst.CSTNode) -> None:
        if stack and stack[-1] is node:
            stack.pop()

    walk(fn, enter, leave)
    return (None, None) if odd else (calls, passed)


def direct_calls(tensors, function: str) -> List[tuple]:
    """[(the analysis of a file, a function's def, its class, its calls of `function`, the function's index
    entry)] for the calls by name, in the files that import it (`from .postprocess import paste_masks`), of a
    top-level function of this file compiled where it is defined (`@torch.compile`): each runs the frame."""
    ctx = tensors.ctx
    project, ix = ctx.project, ctx.index
    depth = getattr(ctx, "foreign_depth", 0)
    if getattr(project, "sources", None) is None or depth >= DEPTH:
        return []
    full, out = f"{ix.module}.{function}", []
    for rel in sorted(set(project.facts.importers.get(full, ())) - {ix.path}):
        cix = project.by_path.get(rel)
        names = {local for local, imported in cix.imports.items() if imported == full} if cix is not None else set()
        for q, info in (cix.functions.items() if names else ()):
            if not any(c.kind == "name" and c.target in names for c in info.calls):
                continue
            other = _file_analysis(tensors, rel, depth + 1)
            fdef = other._helper_def(info) if other is not None else None
            for name in sorted(names) if fdef is not None else ():
                calls, _ = _name_uses(fdef, name)
                if calls:
                    out.append((other, fdef, info.cls, calls, info))
    return out
