"""DYN514 across files: a method of a class of this unit compiled elsewhere (`step_fn = torch.compile(
scheduler.step)` in a script), and a call there, through the same kind of object, of another method of the class
that assigns a Python number the compiled method reads (`scheduler.set_timesteps(steps)` with `self.
num_inference_steps = steps`), with a new value before the next compiled call: in a loop over the values, or in a
function whose callers pass different ones (`sample(..., steps=4)`, `sample(..., steps=8)`). Dynamo guards the
attribute as `fn.__self__.<attr>` at the compiled method's first read of it, whichever file changes it."""
from __future__ import annotations

import ast
import functools
from typing import Dict, Iterator, List, Optional, Tuple

import libcst as cst

from dynlint.analysis import guard_lines
from dynlint.analysis.held import held_by_name
from dynlint.analysis.names import COMPILE
from dynlint.analysis.tensors.foreign import _line_in, alias_calls
from dynlint.linter.walker import walk
from dynlint.rules.common import source_of
from dynlint.rules.recompiles.handed import passed_values
from dynlint.rules.recompiles.rows import _binds_target, entry_methods

Related = Tuple[str, int, int, str]


def set_elsewhere(rule) -> Iterator[Tuple[str, str, tuple, List[Related]]]:
    """(the compiled method, `self.<attr>`, the span of its guard, [(file, line, 0, what) of the calls that set
    it]) for each attribute a method of the unit compiled as an entry reads and calls in other files change."""
    ctx = rule.ctx
    for qual, info in entry_methods(ctx):
        method = qual.rpartition(".")[2]
        setters = _setters(rule, info.cls, method, qual)
        if not setters:
            continue
        found: Dict[str, List[Related]] = {}
        for other, fdef, _, calls, cinfo in alias_calls(rule.tensors, info.cls, method) or ():
            for call, setter in _setter_calls(fdef, setters):
                receiver = call.func.value.value
                held = held_by_name(ctx.project, other.ctx.index, cinfo, receiver)
                if f"{ctx.index.module}.{info.cls}" not in held or not _new_value(other.ctx, fdef, cinfo, call, calls):
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


def assigned_elsewhere(rule, modules: bool) -> Iterator[Tuple[str, str, str, str, tuple, Related]]:
    """(the class, its traced method that reads the attribute, the attribute, the number's kind, the span of the
    guard, (file, line, 0, what) of the assignment) for each assignment in another file of a Python number to
    an attribute of an instance of a class of the unit (a module class when `modules`, another class
    otherwise), through the name that holds it or a chain of attributes that hold its submodules
    (`model.sa1.npoint = 48`), between two calls of the compiled object there: Dynamo guards the value where
    the traced method first reads it. The assignments come from the other files' indexes
    (`FunctionInfo.attr_sets`)."""
    from dynlint.analysis.regions import is_module_class
    ctx = rule.ctx
    ix, unit, project = ctx.index, ctx.unit, ctx.project
    if ix is None or project is None:
        return
    sets = _attr_sets(project, ix)
    if not sets:
        return
    first, last = unit.line_offset + 1, unit.line_offset + unit.text.count("\n") + 1
    for cls, info in ix.classes.items():
        if is_module_class(project, ix.path, cls) != modules:
            continue
        for attr in sorted(_self_reads(rule, cls, first, last) & set(sets)):
            read = _traced_read(rule, cls, attr, first, last)
            if read is None:
                continue
            for rel, here, line, target, value in sets[attr]:
                oix = project.by_path[rel]
                parts = target.split(".")
                # (through the compiled alias, `cm.sa1.npoint = 16` with `cm = torch.compile(model)`: the module)
                head = here.compiled.get(parts[0], parts[0]).split(".")[0]
                kind = number_kind(value) or info.scalars.get(attr)
                if kind is None or not _holds(project, oix, here, head, parts[1:-1], (ix.path, cls)) or \
                        not (_called_around(here, head, line) or _method_runs_around(project, rel, ix, cls, here,
                                                                                      head, line)):
                    continue
                yield cls, read[0], attr, kind, read[1], (rel, line, 0, f"`{target} = {value}` changes it here")


def _attr_sets(project, ix) -> Dict[str, List[tuple]]:
    """attribute -> [(file, function, line, target, value)] of the number assignments (`obj.attr = 48`) in the
    functions of the other files that import the module `ix` or a name of it; made once per run and module."""
    memo = project.per_run(_sets_by_module)
    if ix.module not in memo:
        importers = project.per_run(_importers_by_module)
        if not importers:
            for key, found in project.facts.importers.items():
                for module in {key, key.rpartition(".")[0]}:
                    importers.setdefault(module, set()).update(found)
        out: Dict[str, List[tuple]] = {}
        for rel in sorted(importers.get(ix.module, set()) - {ix.path}):
            for fn in project.by_path[rel].functions.values():
                for line, target, value in fn.attr_sets:
                    out.setdefault(target.rpartition(".")[2], []).append((rel, fn, line, target, value))
        memo[ix.module] = out
    return memo[ix.module]


def _importers_by_module() -> Dict[str, set]:
    return {}


def _sets_by_module() -> Dict[str, Dict[str, List[tuple]]]:
    return {}


def _self_reads(rule, cls: str, first: int, last: int) -> set:
    """The attributes of `self` that the traced methods of the class, defined between the lines `first` and
    `last`, name (a cheap first cut: where Dynamo guards them is `_traced_read`'s)."""
    ctx, out = rule.ctx, set()
    for qual, info in ctx.index.functions.items():
        if info.cls == cls and not info.nested_in and qual in ctx.regions and first <= info.def_line <= last:
            fn = guard_lines.function_at(ctx.source or "", info.def_line)
            out |= {n.attr for n in ast.walk(fn) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                    and n.value.id == "self"} if fn is not None else set()
    return out


def _traced_read(rule, cls: str, attr: str, first: int, last: int) -> Optional[Tuple[str, tuple]]:
    """(the traced method of the class, defined between the lines `first` and `last` (the unit's), that reads
    `self.<attr>` first where Dynamo guards it, the span of that read)."""
    ctx = rule.ctx
    for qual, info in sorted(ctx.index.functions.items(), key=lambda q: q[1].def_line):
        if info.cls == cls and not info.nested_in and qual in ctx.regions and first <= info.def_line <= last:
            span = rule.guard_span(qual, f"self.{attr}", at_entry=False)
            if span is not None:
                return qual, span
    return None


def _holds(project, ix, fn, name: str, chain: List[str], ref: Tuple[str, str]) -> bool:
    """`name`, read in the function `fn` of `ix`, holds an instance of the class `ref` (path, name), or holds
    one whose attributes `chain` lead to such an instance (`model.sa1`: `self.sa1 = SetAbstraction(...)`)."""
    found = [project.resolve(ix, q) for q in held_by_name(project, ix, fn, name)]
    classes = [(r[1][0], r[1][1]) for r in found if r and r[0] == "class"]
    for attr in chain:
        nxt = []
        for path, info in classes:
            cix = project.by_path.get(path)
            for ctor in info.attrs.get(attr, ()) if cix is not None else ():
                r = project.resolve(cix, ctor)
                if r and r[0] == "class":
                    nxt.append((r[1][0], r[1][1]))
        classes = nxt
    return any((path, info.name) == ref for path, info in classes)


def _called_around(fn, name: str, line: int) -> bool:
    """The function calls the compiled object `name` holds after `line`, and before it calls it or hands it to
    a call (`train_epoch(model, ...)`): the object is compiled in place (`name.compile()`) or by an alias
    (`cm = torch.compile(name)`)."""
    aliases = {a for a, what in fn.compiled.items() if what.split(".")[0] == name}
    in_place = any(c.target == f"{name}.compile" for c in fn.calls)
    runs = [c.line for c in fn.calls if c.kind == "name" and (c.target in aliases or (in_place and c.target == name))]
    handed = [c.line for c in fn.calls if (name in c.args or any(a in c.args for a in aliases)) and
              c.target.rpartition(".")[2] != "compile"]       # (not `torch.compile(model)` itself)
    return any(ln > line for ln in runs) and any(ln < line for ln in runs + handed)


def _method_runs_around(project, rel: str, ix, cls: str, fn, name: str, line: int) -> bool:
    """The loop around the assignment at `line` in `fn` (of the file `rel`) calls, through `name`, a method of
    the unit's class `cls` that is compiled where it is defined or calls one such through `self`
    (`trainer.train_step(x, y)` whose `self.apply_update()` is `@torch.compile`): each iteration runs the
    compiled method with what the assignment left."""
    compiled = {q.rpartition(".")[2] for q, f in ix.functions.items() if f.cls == cls and
                any(ix.qualify(d.split("(")[0]) in COMPILE for d in f.decorators)}
    runs = compiled | {q.rpartition(".")[2] for q, f in ix.functions.items() if f.cls == cls and
                       any(c.kind == "self" and c.target in compiled for c in f.calls)}
    tree = guard_lines.parsed(project.sources(rel) or "") if runs else None
    for loop in (n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While))) if tree is not None else ():
        if loop.lineno < line <= (loop.end_lineno or loop.lineno) and any(
                isinstance(c, ast.Call) and guard_lines.dotted(c.func) in {f"{name}.{m}" for m in runs}
                for c in ast.walk(loop)):
            return True
    return False


def number_kind(value: str) -> Optional[str]:
    """"int", "float" or "bool" for the text of a literal of that type (`48`, `-0.5`, `True`)."""
    try:
        v = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return None
    return {bool: "bool", int: "int", float: "float"}.get(type(v))


def module_globals_set_elsewhere(rule) -> Iterator[Tuple[str, str, str, tuple, Related]]:
    """(the traced function, what it reads, the kind of its value, the span of its guard, (file, line, 0, what) of
    the assignment) for each global of a project module that the unit's traced code reads and that another file
    of the project assigns between calls (in a loop that calls something, or between two calls of one function):
    a settings module's global the unit reads as `mod.NAME` (`config.SAMPLE_TEMPERATURE = t` in a sweep), or the
    unit's own global or an item of its dict that a script sets through the module (`T.FLAGS["grad_accum"] =
    2` between two `trainer.fit(...)`). Dynamo guards it as `G['config'].NAME` / `G['FLAGS']['grad_accum']` at
    the first read, and each new value fails that guard at the next call."""
    from dynlint.rules.recompiles.state_set import _first_value_kind, traced_reads
    ctx = rule.ctx
    ix, project = ctx.index, ctx.project
    if ix is None or project is None or project.sources is None:
        return
    own = [(ix.module, "", ix.path)]
    imported = [(full, local, mix.path) for local, full in sorted(ix.imports.items())
                for mix in [project.by_module.get(full) if "." in full or full in project.by_module else None]
                if mix is not None and mix.path != ix.path]
    for module, local, path in own + imported:
        reads = _module_reads(ctx, local) if local else None
        if local and not reads:
            continue
        assigned = [a for a in _assignments_elsewhere(project, module) if a[0] != ix.path]
        if not assigned:
            continue
        module_source = ctx.source if path == ix.path else project.sources(path) or ""
        for rel, line, name, key in assigned:
            read = f"{local}.{name}" if local else name
            kind = _first_value_kind(module_source, name) if key is None else _item_kind(module_source, name, key)
            reader = (reads or {}).get(name) if local else next(iter(traced_reads(ctx, name)), None)
            if not reader or not kind:
                continue
            span = rule.guard_span(reader, read, at_entry=False) if key is None else _key_span(ctx, reader, name, key)
            label = read if key is None else f"{read}[{key!r}]"
            if span is not None:
                yield reader, label, kind, span, (rel, line, 0, f"`{label}` changes here")


def _assignments_elsewhere(project, module: str) -> List[Tuple[str, int, str, object]]:
    """(file, line, NAME, key or None) of the assignments to `module`'s globals between calls in the files of the
    project that import it, as their index records them (`FunctionInfo.module_sets`): once per module and run (a
    module of common helpers has a thousand importers)."""
    memo = project.per_run(_assignments_memo)
    if module not in memo:
        memo[module] = []
        for rel in sorted(project.facts.importers.get(module, ())):
            cix = project.by_path.get(rel)
            aliases = {a for a, m in (cix.imports.items() if cix is not None else ()) if m == module}
            for f in cix.functions.values() if aliases else ():
                memo[module] += [(rel, line, name, key) for line, alias, name, key in f.module_sets if alias in aliases]
    return memo[module]


def _assignments_memo() -> dict:
    """module -> `_assignments_elsewhere`."""
    return {}


def _item_kind(source: str, name: str, key) -> Optional[str]:
    """The kind of the literal a module-level dict display keeps at `key` (`FLAGS = {"grad_accum": 1}`)."""
    tree = guard_lines.parsed(source)
    for st in tree.body if tree is not None else ():
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Dict) and \
                any(isinstance(t, ast.Name) and t.id == name for t in st.targets):
            value = next((v for k, v in zip(st.value.keys, st.value.values)
                          if isinstance(k, ast.Constant) and k.value == key), None)
            return {bool: "bool", int: "int", float: "float"}.get(type(value.value)) \
                if isinstance(value, ast.Constant) else None
    return None


def _key_span(ctx, reader: str, name: str, key) -> Optional[tuple]:
    info = ctx.index.functions.get(reader)
    fn = guard_lines.function_at(ctx.source or "", info.def_line) if info is not None else None
    return guard_lines.key_read(ctx.source or "", fn, name, key) if fn is not None else None


def _module_reads(ctx, local: str) -> Dict[str, str]:
    """NAME -> the first traced function of the unit's file that reads `local.NAME` (one walk of the file's
    traced functions per run, for every local name at once: it is asked once per unit and imported module)."""
    memo = ctx.project.per_run(_reads_memo)
    if ctx.path not in memo:
        source, ix = ctx.source or "", ctx.index
        found: Dict[str, Dict[str, str]] = {}
        for q in sorted(ctx.regions):
            info = ix.functions.get(q)
            fn = guard_lines.function_at(source, info.def_line) if info is not None else None
            for n in ast.walk(fn) if fn is not None else ():
                if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and isinstance(n.ctx, ast.Load):
                    found.setdefault(n.value.id, {}).setdefault(n.attr, q)
        memo[ctx.path] = found
    return memo[ctx.path].get(local, {})


def _reads_memo() -> dict:
    """file -> {local name: {NAME: the first traced function reading `local.NAME`}} (`_module_reads`)."""
    return {}


def global_setters_called_elsewhere(rule) -> Iterator[Tuple[str, str, str, tuple, Related]]:
    """(the traced function, the global it reads, the kind of its value, the span of its guard, (file, line, 0,
    what) of the call) for each global of this file that a function of the file sets (`def set_debug(flag):
    global DEBUG; DEBUG = flag`), read by the unit's traced code, where another file of the project calls that
    setter between calls (in a loop that calls something else, or between two calls of one callee): Dynamo
    guards `G['DEBUG'] == False` at the first read, and the call after the setter fails it (measured, torch
    2.13), as for a global the other file assigns through the module (`module_globals_set_elsewhere`)."""
    from dynlint.rules.recompiles.state_set import traced_reads
    ctx = rule.ctx
    ix, project = ctx.index, ctx.project
    if ix is None or project is None or project.sources is None:
        return
    setters = _global_setters(ctx.source or "")
    importers = project.facts.importers
    rels = {r for m in [ix.module, *(f"{ix.module}.{s}" for s in setters)] for r in importers.get(m, ())}
    for rel in sorted(rels):
        cix = project.by_path.get(rel)
        other = guard_lines.parsed(project.sources(rel) or "") if cix is not None and rel != ix.path else None
        names = _setter_names(cix.imports, ix.module, setters) if other else {}
        for line, callee in _called_between_calls(other, set(names)) if names else ():
            for name, kind in setters[names[callee]]:
                reader = next(iter(traced_reads(ctx, name)), None)
                span = rule.guard_span(reader, name, at_entry=False) if reader else None
                if span is not None:
                    yield reader, name, kind, span, (rel, line, 0, f"`{callee}(...)` changes `{name}` here")
                    break


@functools.lru_cache(maxsize=8)
def _global_setters(source: str) -> Dict[str, List[Tuple[str, str]]]:
    """{top-level function: [(global, kind of its first value)]} for the file's functions that assign a global
    (`def set_debug(flag): global DEBUG; DEBUG = flag`); found once per file (every unit of the file asks)."""
    from dynlint.rules.recompiles.state_set import _state_set_by
    tree = guard_lines.parsed(source)
    found = {fn.name: [(n, k) for n, k in _state_set_by(source, fn) if "." not in n and k]
             for fn in (tree.body if tree is not None else ()) if isinstance(fn, ast.FunctionDef) and
             any(isinstance(st, ast.Global) for st in ast.walk(fn))}
    return {name: sets for name, sets in found.items() if sets}


def _setter_names(imports: Dict[str, str], module: str, setters) -> Dict[str, str]:
    """{the dotted name an importer calls a setter of `module` by: the setter} (`set_debug` after a from-import,
    `flags.set_debug` through the module)."""
    names = {local: full.rpartition(".")[2] for local, full in imports.items()
             if full.rpartition(".")[0] == module and full.rpartition(".")[2] in setters}
    names.update({f"{local}.{s}": s for local, full in imports.items() if full == module for s in setters})
    return names


def _called_between_calls(tree: ast.AST, callees: set) -> List[Tuple[int, str]]:
    """(line, callee) of each call in `tree` of one of `callees` (dotted names) made between calls: in a loop
    that calls something else too, or in a function that calls another callee both before it and after it."""
    out = []
    for scope in (n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While, ast.FunctionDef))):
        calls = [(n.lineno, guard_lines.dotted(n.func)) for s in scope.body for n in ast.walk(s)
                 if isinstance(n, ast.Call)]
        for line, callee in calls:
            if callee not in callees:
                continue
            others = [(ln, c) for ln, c in calls if c and c != callee]
            if isinstance(scope, (ast.For, ast.While)) and others or \
                    {c for ln, c in others if ln < line} & {c for ln, c in others if ln > line}:
                out.append((line, callee))
    return list(dict.fromkeys(out))
