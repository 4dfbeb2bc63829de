"""Compile regions: the functions torch.compile will trace.

Roots are (a) functions decorated with torch.compile in any spelling, (b) what is passed to
`torch.compile(...)`, (c) in `auto` mode the `forward` of every nn.Module subclass, (e) the entry points the
configuration declares (`compiled = ["pkg.schedulers.*:*.step"]`: compiled by code outside the project); then (d) everything
those call, across the project's files. Functions marked `torch.compiler.disable` are never traced.
The result maps each region function to the call chain that reaches it from a root, as shown to users:
a long chain keeps its root and its last functions (SHOWN_CHAIN in all), so what is kept stays bounded.
"""
from __future__ import annotations

import fnmatch
from collections import deque
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from dynlint.analysis.frames import Frame, Frames, decorator_wrapper, traced_decorators
from dynlint.analysis.held import held_by_name, passed_constructions
from dynlint.analysis.names import COMPILE, DISABLE, OPAQUE, is_module_base, strip_call
from dynlint.analysis.resumed import after_skipping_breaks, in_skipped_frames, resumed_guards
from dynlint.linter.index import CallSite, ClassInfo, FunctionInfo, ModuleIndex
from dynlint.linter.project import FuncRef, Project

# what the engine calls (linter/engine.RegionAnalysis): this module is the analysis it is handed
__all__ = ["COMPILED", "after_skipping_breaks", "find_regions", "find_frames", "in_skipped_frames",
           "resumed_guards", "site_lines"]

Chain = Tuple[str, ...]
SHOWN_CHAIN = 8         # functions of a call chain shown; a longer one: root, "... N more ...", the last 6


def _is_compile(ix: ModuleIndex, dotted: str) -> bool:
    return ix.qualify(strip_call(dotted)) in COMPILE


def is_disabled(ix: ModuleIndex, fn: FunctionInfo) -> bool:
    """Marked `torch.compiler.disable`: Dynamo breaks the graph to call it and never traces it."""
    return any(ix.qualify(strip_call(d)) in DISABLE for d in fn.decorators)


def is_opaque(ix: ModuleIndex, fn: FunctionInfo) -> bool:
    """An op Dynamo puts in the graph whole (custom_op, its register_fake, allow_in_graph): body not traced."""
    return any(ix.qualify(strip_call(d)) in OPAQUE or strip_call(d).endswith(".register_fake")
               for d in fn.decorators)


def not_traced(ix: ModuleIndex, fn: FunctionInfo) -> bool:
    return is_disabled(ix, fn) or is_opaque(ix, fn)


def is_module_class(project: Project, path: str, cls: str) -> bool:
    return any(is_module_base(b) for b in project.external_bases(path, cls))


def _forward_of(project: Project, path: str, cls: str) -> List[FuncRef]:
    ref = project.method(path, cls, "forward") or project.method(path, cls, "__call__")
    return [ref] if ref else []


def targets_of_value(project: Project, ix: ModuleIndex, fn: Optional[FunctionInfo], value: str) -> List[FuncRef]:
    """What a value passed to torch.compile(...) runs: a function, a module's forward, a bound method."""
    if not value:
        return []
    if value.endswith("()"):                      # torch.compile(Model(...)), torch.compile(make_step())
        return _made_by(project, ix, value[:-2])
    made, _, meth = value.partition("().")
    if meth and "." not in meth:                  # torch.compile(Augment(...).__call__): a bound method
        r = project.resolve(ix, made)
        return _class_target(project, r[1][0], r[1][1].name, meth) if r and r[0] == "class" else []
    head, _, rest = value.partition(".")
    if head == "self" and fn and fn.cls:
        return _self_targets(project, ix, fn, rest)
    instances = dict(ix.module_instances, **(fn.instances if fn else {}))
    if fn and head in fn.params and head not in instances:
        out = []
        for p, c in _passed_classes(project, ix, fn, head):
            out += _class_target(project, p, c, rest)
        return out
    if head in instances:
        out = []
        for ctor in instances[head]:
            if _is_compile(ix, ctor):
                continue
            r = project.resolve(ix, ctor)
            if r and r[0] == "class":
                out += _class_target(project, r[1][0], r[1][1].name, rest)
        return out
    r = project.resolve(ix, value, fn.qualname if fn else "")
    if r and r[0] == "function":
        return [r[1]]
    if r and r[0] == "class":
        return _forward_of(project, r[1][0], r[1][1].name)
    return []


def _made_by(project: Project, ix: ModuleIndex, callee: str) -> List[FuncRef]:
    """What `torch.compile(callee())` compiles: a module's forward, or the closure a factory function returns."""
    r = project.resolve(ix, callee)
    if r and r[0] == "function":
        made = project.function(r[1]).returns_def
        inner = (r[1][0], f"{r[1][1]}.{made}")
        return [inner] if made and project.by_path[inner[0]].functions.get(inner[1]) else []
    return _forward_of(project, r[1][0], r[1][1].name) if r and r[0] == "class" else []


def _self_targets(project: Project, ix: ModuleIndex, fn: FunctionInfo, rest: str) -> List[FuncRef]:
    """`self.<rest>` in a method of `fn.cls`: a method of the class, or a submodule's forward or method."""
    attr, _, meth = rest.partition(".")
    if not meth:
        ref = project.method(ix.path, fn.cls, attr)
        if ref:
            return [ref]
    out = []
    for p, c in _held(project, ix.path, fn.cls, attr):
        out += [r for r in ([project.method(p, c.name, meth)] if meth else _forward_of(project, p, c.name)) if r]
    return out


def _held(project: Project, path: str, cls: str, attr: str) -> List[Tuple[str, ClassInfo]]:
    """The project classes `self.<attr>` holds: those the class (or a base) constructs into it, and those the
    project's calls of the class pass to the `__init__` parameter it keeps (`self.reporter = reporter` ...
    `Model(Reporter())`): a collaborator handed in is traced as one made inside."""
    out = list(project.attr_classes(path, cls, attr))
    ix = project.by_path[path]
    info, init = ix.classes.get(cls), ix.functions.get(f"{cls}.__init__")
    param = getattr(info, "param_attrs", {}).get(attr) if info is not None else None
    if param and init is not None:
        memo = project.per_run(_handed_in)           # (asked per call site: once per class and parameter)
        if (path, cls, param) not in memo:
            memo[(path, cls, param)] = _passed_classes(project, ix, init, param)
        for p, name in memo[(path, cls, param)]:
            held = project.by_path[p].classes.get(name)
            if held is not None and (p, held) not in out:
                out.append((p, held))
    return out


def _handed_in() -> dict:
    """(path, class, __init__ parameter) -> the classes the project's constructions pass for it."""
    return {}


def _class_target(project: Project, path: str, cls: str, rest: str) -> List[FuncRef]:
    """An instance of `cls` (its method `rest`, or itself when `rest` is empty: its forward)."""
    ref = project.method(path, cls, rest) if rest else None
    return [ref] if ref else ([] if rest else _forward_of(project, path, cls))


def _passed_classes(project: Project, ix: ModuleIndex, fn: FunctionInfo, param: str) -> List[Tuple[str, str]]:
    """The project classes of what the project's calls of `fn` pass as `param`, where each passes an instance it
    made (`held.passed_constructions`): (path, class name); [] when any of them is not a project class."""
    classes = [project.resolve(cix, made) for cix, made in passed_constructions(project, ix, fn, param) or ()]
    if not classes or any(not r or r[0] != "class" for r in classes):
        return []
    return sorted({(r[1][0], r[1][1].name) for r in classes})


def _compile_sites(fn: Optional[FunctionInfo], calls: List[CallSite], ix: ModuleIndex):
    for c in calls:
        if c.kind == "name" and _is_compile(ix, c.target) and c.args:
            yield fn, c.args[0]


def declared(entries: Sequence[str], module: str, qualname: str) -> bool:
    """Is `module:qualname` one of the configuration's `compiled` entry points (`pkg.schedulers.*:*.step`:
    shell-style patterns for the dotted module and the function's qualified name)?"""
    return any(fnmatch.fnmatchcase(module, m) and fnmatch.fnmatchcase(qualname, f)
               for m, _, f in (e.partition(":") for e in entries))


def roots(project: Project, mode: str = "auto", entries: Sequence[str] = (),
          explicit: Optional[List[FuncRef]] = None) -> Dict[FuncRef, Chain]:
    """The functions torch.compile enters; `explicit`, when given, receives those the code compiles itself
    (`@torch.compile`, `torch.compile(f)`), which the frame model counts as entries."""
    out: Dict[FuncRef, Chain] = {}
    for ix in project.by_path.values():
        for q, fn in ix.functions.items():
            if not_traced(ix, fn):
                continue
            decorated = any(_is_compile(ix, d) for d in fn.decorators)
            forward = (mode == "auto" and fn.cls and q == f"{fn.cls}.forward"
                       and is_module_class(project, ix.path, fn.cls) and not _compiles_parts(ix, fn.cls))
            if decorated or forward or mode == "all" or (entries and declared(entries, ix.module, q)):
                out[(ix.path, q)] = (q,)
                for ref in _traced_wrappers(project, ix, fn, forward):
                    out.setdefault(ref, (ref[1],))
            if decorated and explicit is not None:
                explicit.append((ix.path, q))
        sites = list(_compile_sites(None, ix.module_calls, ix))
        for fn in ix.functions.values():
            sites += _compile_sites(fn, fn.calls, ix)
            if mode == "auto":              # (every module's forward counts as compiled, and so do its hooks)
                for ref in _registered_hooks(project, ix, fn):
                    out.setdefault(ref, (ref[1],))
        for fn, value in sites:
            for ref in targets_of_value(project, ix, fn, value):
                out.setdefault(ref, (ref[1],))
                if explicit is not None:
                    explicit.append(ref)
    return out


def _traced_wrappers(project: Project, ix: ModuleIndex, fn: FunctionInfo, forward: bool) -> List[FuncRef]:
    """The wrappers of the project decorators that `torch.compile` traces around a compiled function: those under
    an `@torch.compile` above them, and all of a module's `forward` (calling the module runs what the class holds
    as `forward`: the outermost wrapper)."""
    inner = traced_decorators(ix, fn)
    if not forward and len(inner) == len(fn.decorators):
        return []           # (no `@torch.compile` of its own: compiled as called, through its decorators or not)
    found = [decorator_wrapper(project, ix, d) for d in inner]
    return [w[0] for w in found if w is not None]


def _aliases() -> dict:
    return {}


def compiled_elsewhere(project: Project, ref: FuncRef) -> List[Tuple[str, str, List[CallSite]]]:
    """(path, alias, the calls of alias) for each `alias = torch.compile(<ref>)` in a function of the project,
    and for each function of another file that calls `<ref>` by name where `<ref>` is compiled by its own
    `@torch.compile` (`from .post import paste`): what the calls of a compiled function pass, in whichever file
    they are (one pass over the project per run)."""
    memo = project.per_run(_aliases)
    if "all" not in memo:
        found: Dict[FuncRef, List[Tuple[str, str, List[CallSite]]]] = {}
        decorated = _decorated_compiled(project)
        for ix in project.by_path.values():
            for fn in ix.functions.values():
                for alias, value in getattr(fn, "compiled", {}).items():
                    calls = [c for c in fn.calls if c.kind == "name" and c.target == alias]
                    for target in targets_of_value(project, ix, fn, value):
                        found.setdefault(target, []).append((ix.path, alias, calls))
                by_target: Dict[str, List[CallSite]] = {}
                for c in fn.calls if decorated else ():
                    if c.kind == "name" and c.target.rpartition(".")[2] in decorated:
                        by_target.setdefault(c.target, []).append(c)
                for name, calls in by_target.items():
                    r = project.resolve(ix, name)
                    if r and r[0] == "function" and r[1][0] != ix.path and r[1] in decorated[name.rpartition(".")[2]]:
                        found.setdefault(r[1], []).append((ix.path, name, calls))
        memo["all"] = found
    return memo["all"].get(ref, [])


def _decorated_compiled(project: Project) -> Dict[str, Set[FuncRef]]:
    """name -> the module-level functions of that name that an `@torch.compile` of their own compiles."""
    out: Dict[str, Set[FuncRef]] = {}
    for ix in project.by_path.values():
        for q, fn in ix.functions.items():
            if not fn.cls and not fn.nested_in and "." not in q and \
                    any(ix.qualify(strip_call(d)) in COMPILE for d in fn.decorators):
                out.setdefault(q, set()).add((ix.path, q))
    return out


def call_edges(project: Project, ref: FuncRef, nested: Dict[str, Dict[str, List[str]]]
               ) -> List[Tuple[Optional[CallSite], FuncRef]]:
    """The functions `ref` calls, or defines inside, each with the call site that calls it (None for a function
    defined inside). nested: path -> {function: the functions defined inside it}, filled here once per file (a
    scan of the file's functions per region would make a file of many functions quadratic)."""
    path, q = ref
    ix = project.by_path[path]
    fn = ix.functions[q]
    if path not in nested:
        nested[path] = {}
        for n, f in ix.functions.items():
            if f.nested_in:
                nested[path].setdefault(f.nested_in, []).append(n)
    # nested functions defined inside a region are traced with it
    out: List[Tuple[Optional[CallSite], FuncRef]] = [(None, (path, n)) for n in nested[path].get(q, ())]
    for c in fn.calls:
        if c.kind == "name":
            out += [(c, f) for f in _name_targets(project, ix, fn, c)]
        elif c.kind == "self" and fn.cls:
            attr, _, meth = c.target.partition(".")
            if not meth:
                m = project.method(path, fn.cls, attr)
                # `self.update()` runs `type(self).update`: the override of any subclass too (or, for a method
                # the class leaves to its subclasses, theirs alone)
                found = ([m] if m else []) + _overrides(project, path, fn.cls, attr)
                if found:
                    out += [(c, f) for f in found]
                    continue
            for p, cls in _held(project, path, fn.cls, attr):
                if meth:
                    m = project.method(p, cls.name, meth)
                    out += [(c, m)] if m else []
                else:
                    out += [(c, f) for f in _forward_of(project, p, cls.name)]
        elif c.kind == "element" and fn.cls:
            # `self.filters[i].apply(x)`, `for f in self.filters: f.apply(x)`: the method of each class the
            # container holds (what `__init__` puts in it)
            attr, _, meth = c.target.partition(".")
            for p, cls in _held(project, path, fn.cls, attr):
                m = project.method(p, cls.name, meth)
                out += [(c, m)] if m else []
        elif c.kind == "super" and fn.cls:
            for p, base in project.bases(path, fn.cls):
                m = project.method(p, base, c.target)
                if m:
                    out.append((c, m))
                    break
        out += [(c, f) for f in _passed_functions(project, ix, fn, c)]
    if fn.cls and q.rpartition(".")[2] == "forward":
        out += [(None, f) for f in _hooks(project, path, fn.cls)]
    return out


def _overrides(project: Project, path: str, cls: str, name: str) -> List[FuncRef]:
    """The methods `name` that the project's subclasses of `cls` define themselves."""
    return [(p, f"{sub}.{name}") for p, sub in project.subclasses(path, cls)
            if f"{sub}.{name}" in project.by_path[p].functions]


def _name_targets(project: Project, ix: ModuleIndex, fn: FunctionInfo, c: CallSite) -> List[FuncRef]:
    """What a call of a dotted name runs: a project function, an autograd Function's forward and backward, the
    protocol method `next(x)` / `len(x)` / `iter(x)` calls, or a method of a parameter's class."""
    r = project.resolve(ix, c.target, fn.qualname)
    if r and r[0] == "function":
        return [r[1]]
    if r and r[0] == "class" and is_module_class(project, r[1][0], r[1][1].name):
        # an nn.Module built in traced code: Dynamo traces its `__init__` (and breaks there: DYN618)
        init = project.method(r[1][0], r[1][1].name, "__init__")
        return [init] if init else []
    if r is not None:
        return []
    if c.target.endswith(".apply"):
        return _autograd_function(project, ix, c.target[:-len(".apply")])
    if c.target in PROTOCOL and c.args and c.args[0]:
        return _protocol_method(project, ix, fn, c.args[0], PROTOCOL[c.target])
    if "." not in c.target:
        return _instance_call(project, ix, fn, c.target)
    return _parameter_method(project, ix, fn, c.target)


def _instance_call(project: Project, ix: ModuleIndex, fn: FunctionInfo, name: str) -> List[FuncRef]:
    """`mix(x, y)` where `mix` holds an instance of a project class with a `__call__` (made in the function, in
    the one it is nested in, at the module level, or passed by every caller): calling it runs `__call__`, which
    Dynamo inlines like any method."""
    out = []
    for ctor in held_by_name(project, ix, fn, name):
        r = project.resolve(ix, ctor)
        m = project.method(r[1][0], r[1][1].name, "__call__") if r and r[0] == "class" else None
        out += [m] if m else []
    return out


def _parameter_method(project: Project, ix: ModuleIndex, fn: FunctionInfo, target: str) -> List[FuncRef]:
    """`metrics.update(...)` where `metrics` is a parameter: the method of the project classes the project's
    callers construct and pass for it (`held.passed_constructions`, calls through `torch.compile(f)` included)."""
    head, _, meth = target.partition(".")
    if not meth or "." in meth or head not in fn.params or head in fn.instances or head in ("self", "cls"):
        return []
    return [m for p, cls in _passed_classes(project, ix, fn, head) for m in [project.method(p, cls, meth)] if m]


# builtins that call a method of their argument's class, which Dynamo inlines as it does any method
PROTOCOL = {"next": "__next__", "iter": "__iter__", "len": "__len__"}


def _protocol_method(project: Project, ix: ModuleIndex, fn: FunctionInfo, arg: str, method: str) -> List[FuncRef]:
    """`next(noise)`: the `__next__` of the project class `noise` holds (a local construction, or what every
    caller passes for a parameter)."""
    if arg in fn.instances:
        found = [project.resolve(ix, ctor) for ctor in fn.instances[arg]]
        return [m for r in found if r and r[0] == "class" for m in [project.method(r[1][0], r[1][1].name, method)] if m]
    return _parameter_method(project, ix, fn, f"{arg}.{method}")


AUTOGRAD_FUNCTION = ("torch.autograd.Function", "torch.autograd.function.Function")


def _autograd_function(project: Project, ix: ModuleIndex, name: str) -> List[FuncRef]:
    """`Fn.apply(x)` where `Fn` is a project class deriving from `torch.autograd.Function`: Dynamo traces its
    `forward` (and, to build the backward graph, its `backward`) as part of the frame."""
    r = project.resolve(ix, name)
    if not (r and r[0] == "class"):
        return []
    path, info = r[1]
    if not any(base in AUTOGRAD_FUNCTION for base in project.external_bases(path, info.name)):
        return []
    return [m for m in (project.method(path, info.name, "forward"), project.method(path, info.name, "backward")) if m]


# Calls that keep a function they are given rather than call it while tracing: registering (a hook, a buffer
# factory), disabling or compiling it.
_KEEPS_FUNCTION = ("register_", "add_")
HOOK_REGISTRATIONS = ("register_forward_hook", "register_forward_pre_hook")


def _passed_functions(project: Project, ix: ModuleIndex, fn: FunctionInfo, c: CallSite) -> List[FuncRef]:
    """The project functions a call in traced code is given as positional arguments: Dynamo follows a function
    object to where it is called, so `checkpoint(block, x)`, `functools.partial(f, k=1)(x)`, `torch.cond(p, f, g,
    ...)` or a user's `apply(fn, x)` trace `fn` in the same frame. Not a function the call only keeps."""
    last = c.target.rpartition(".")[2]
    if not c.args or last.startswith(_KEEPS_FUNCTION) or (c.kind == "name" and (
            ix.qualify(c.target) in DISABLE or ix.qualify(c.target) in OPAQUE or ix.qualify(c.target) in COMPILE)):
        return []
    return [ref for a in c.args if a for ref in _function_named(project, ix, fn, a)]


def _function_named(project: Project, ix: ModuleIndex, fn: FunctionInfo, name: str) -> List[FuncRef]:
    """The project function a name seen in `fn` stands for (`helper`, `mod.helper`, `self.method`), if any."""
    if name.startswith("self."):
        m = project.method(ix.path, fn.cls, name[5:]) if fn.cls and name.count(".") == 1 else None
        return [m] if m else []
    r = project.resolve(ix, name, fn.qualname)
    return [r[1]] if r and r[0] == "function" else []


def _hooks(project: Project, path: str, cls: str) -> List[FuncRef]:
    """The functions a module class registers as its own forward hooks (`self.register_forward_hook(fn)` in any
    of its methods): `nn.Module.__call__` runs them around every `forward`, and Dynamo traces them with it."""
    ix = project.by_path[path]
    found: List[FuncRef] = []
    for f in ix.functions.values():
        for c in f.calls if f.cls == cls else ():
            if c.kind == "self" and c.target in HOOK_REGISTRATIONS and c.args and c.args[0]:
                found += _function_named(project, ix, f, c.args[0])
    return found


def _compiles_parts(ix: ModuleIndex, cls: str) -> bool:
    """The class compiles parts of itself (`self.head = torch.compile(nn.Linear(...))`, `self.step =
    torch.compile(self.step)`): its author compiles what should be compiled, so its forward is not taken for
    compiled as a whole (auto mode's guess yields to that evidence); the parts are followed as compiled."""
    info = ix.classes.get(cls)
    return info is not None and any(_is_compile(ix, c) for ctors in info.attrs.values() for c in ctors)


def _registered_hooks(project: Project, ix: ModuleIndex, fn: FunctionInfo) -> List[FuncRef]:
    """The functions `fn` registers as forward hooks of a module other than its own `self`
    (`m.register_forward_hook(hook)` for each `m` of a model's `named_modules()`): `nn.Module.__call__` runs them
    around the module's forward, inside the compiled frame. A hook named (`hook`, `self.on_output`), or made by a
    factory of the project (`self._make_hook(name)`: the functions defined inside the factory)."""
    found: List[FuncRef] = []
    for c in fn.calls:
        if c.kind == "self" or c.target.rpartition(".")[2] not in HOOK_REGISTRATIONS or not c.args or not c.args[0]:
            continue
        arg = c.args[0]
        if not arg.endswith("()"):
            found += _function_named(project, ix, fn, arg)
            continue
        for path, q in _function_named(project, ix, fn, arg[:-2]):       # a factory: what it defines inside
            fix = project.by_path[path]
            found += [(path, inner) for inner, info in fix.functions.items() if info.nested_in == q]
    return found


def extend(chain: Chain, name: str, length: int) -> Chain:
    """The shown chain of a callee `name` whose whole chain has `length` functions, from its caller's shown
    chain: constant work per region, where copying whole chains was quadratic in a chain's depth."""
    if length <= SHOWN_CHAIN:
        return chain + (name,)
    tail = SHOWN_CHAIN - 2
    return (chain[0], f"... {length - 1 - tail} more ...") + chain[-(tail - 1):] + (name,)


COMPILED = "compiled"        # the key under which find_regions leaves the explicitly compiled functions in `edges`


def find_regions(project: Project, mode: str = "auto", entries: Sequence[str] = (),
                 edges: Optional[dict] = None) -> Dict[FuncRef, Chain]:
    """Every traced function -> the shortest call chain from a root (breadth-first), as shown (`extend`);
    `entries`: the configuration's `compiled` entry points, roots too. `edges`, when given, receives each
    region function's call edges (`call_edges`), which the frame model reuses, and under COMPILED the
    functions the code compiles explicitly."""
    compiled: List[FuncRef] = []
    regions = roots(project, mode, entries, compiled)
    if edges is not None:
        edges[COMPILED] = sorted(set(compiled))
    length = dict.fromkeys(regions, 1)
    nested: Dict[str, Dict[str, List[str]]] = {}
    queue = deque(regions)
    while queue:
        ref = queue.popleft()
        out = call_edges(project, ref, nested)
        if edges is not None:
            edges[ref] = out
        for _, callee in out:
            if callee in regions:
                continue
            cix = project.by_path[callee[0]]
            if not_traced(cix, cix.functions[callee[1]]):
                continue
            length[callee] = length[ref] + 1
            regions[callee] = extend(regions[ref], callee[1], length[callee])
            queue.append(callee)
    return regions


def find_frames(project: Project, regions: Iterable[FuncRef], text: Callable[[str], Optional[str]],
                breaks: Iterable, kept: Optional[tuple] = None, digest: Optional[Callable] = None
                ) -> Tuple[Dict[FuncRef, Frame], Optional[tuple]]:
    """The region functions that graph breaks make Dynamo compile on their own (analysis/frames.py), and what
    to pass back as `kept` next time (the region graph while the indexes are unchanged, each frame's facts
    while the files they were read from are), or None when that is what `kept` already holds.
    text: a file's source by project-relative path; breaks: the graph-break findings; digest: a file's."""
    graph, facts = kept if kept else (None, None)
    model = Frames(project, regions, text, call_edges, graph, facts, digest)
    def compiled() -> List[FuncRef]:
        out: List[FuncRef] = []
        roots(project, "explicit", (), out)
        return sorted(set(out))
    frames = model.find(breaks, compiled=compiled)
    project.entered = model.entered         # (read by in_skipped_frames: calls that end their caller's graph)
    return frames, ((model.graph, model.made) if model.fresh or len(model.made) != len(facts or {}) else None)


def compiled_in(ix: ModuleIndex) -> Set[str]:
    """The local names of one file that hold compiled callables (decorated functions, `x = torch.compile(...)`,
    instances of a class whose forward is compiled, a method rebound to its compiled self)."""
    names = {q for q, f in ix.functions.items() if "." not in q and any(_is_compile(ix, d) for d in f.decorators)}
    # a compiled function nested in another (a closure): called by its own name inside that function
    names |= {q.rsplit(".", 1)[1] for q, f in ix.functions.items()
              if f.nested_in and not f.cls and any(_is_compile(ix, d) for d in f.decorators)}
    names |= {n for n, callee in ix.assigned_calls.items() if _is_compile(ix, callee)}
    compiled_forward = _compiled_forward(ix)
    names |= {n for n, ctors in ix.module_instances.items() if set(ctors) & compiled_forward}
    for fn in ix.functions.values():
        names |= {n for n, ctors in fn.instances.items()
                  if any(_is_compile(ix, c) for c in ctors) or set(ctors) & compiled_forward}
        # an instance's method rebound to its compiled self (`model.forward = torch.compile(model.forward)`)
        names |= {n for n, what in fn.compiled.items() if what in (n, f"{n}.forward")}
    # a module compiled in place, `model.compile()` (nn.Module.compile): its calls from then on are compiled
    for c in list(ix.module_calls) + [c for f in ix.functions.values() for c in f.calls]:
        head, _, last = c.target.partition(".")
        if c.kind == "name" and last == "compile" and head not in ix.imports and not c.args:
            names.add(head)
    return names


def _compiled_forward(ix: ModuleIndex) -> Set[str]:
    """The classes of one file whose `forward` is compiled (`@torch.compile def forward`, `self.forward =
    torch.compile(self.forward)`): calling one of their instances runs the compiled forward."""
    def compiled(ctors) -> bool:
        return any(_is_compile(ix, c) for c in ctors)
    return {c for c, info in ix.classes.items()
            if compiled(getattr(ix.functions.get(f"{c}.forward"), "decorators", ())) or
            compiled(info.attrs.get("forward", ()))}


def compiled_methods(ix: Optional[ModuleIndex]) -> Set[str]:
    """The names of one file's compiled methods: methods decorated with `torch.compile`, and attributes a class
    binds to `torch.compile(...)` (`self.run = torch.compile(self._pool)`)."""
    if ix is None:
        return set()
    out = {q.rsplit(".", 1)[1] for q, f in ix.functions.items()
           if f.cls and "." in q and any(_is_compile(ix, d) for d in f.decorators)}
    for info in ix.classes.values():
        out |= {a for a, ctors in info.attrs.items() if any(_is_compile(ix, c) for c in ctors)}
    return out


def site_lines(ix: ModuleIndex) -> Set[int]:
    """Lines of one file's calls that set up torch.compile or call a compiled callable or method (site rules
    look there). They depend on nothing but the file's own index."""
    compiled, methods = compiled_in(ix), compiled_methods(ix)
    calls = list(ix.module_calls) + [c for f in ix.functions.values() for c in f.calls]

    def site(c) -> bool:
        return c.kind == "name" and (ix.qualify(strip_call(c.target)) in COMPILE or c.target in compiled or
                                     ("." in c.target and c.target.rsplit(".", 1)[1] in methods)) or \
            c.kind == "self" and c.target in methods
    lines = {c.line for c in calls if site(c)} | _handed_compiled_lines(ix, compiled, calls)
    # a bare `@torch.compile` is no call, but sets up compilation as `@torch.compile(...)` does
    lines |= {f.start for f in ix.functions.values() if any(not d.endswith(")") and ix.qualify(d) in COMPILE
                                                            for d in f.decorators)}
    return lines | _forwarding_lines(ix, lines)


def _forwarding_lines(ix: ModuleIndex, lines: Set[int]) -> Set[int]:
    """Lines of calls of the file's functions that call compiled code themselves (`trainer.train_step(x, lam)`
    where `train_step` calls `self.compiled_forward(x, lam)`): what such a call passes may reach the compiled
    frame unchanged."""
    through = {q for q, f in ix.functions.items() if any(c.line in lines for c in f.calls)}
    # a factory of compiled closures (`def make(factor): @torch.compile def scale(x): ... factor ...`): what
    # its calls pass is what the closures it makes read
    through |= {q.rsplit(".", 1)[0] for q, f in ix.functions.items() if "." in q and q.rsplit(".", 1)[0] in
                ix.functions and not f.cls and any(ix.qualify(strip_call(d)) in COMPILE for d in f.decorators)}
    tops = {q for q in through if "." not in q} | {q.rsplit(".", 1)[1] for q in through
                                                    if "." in q and not ix.functions[q].cls}
    names = {q.rsplit(".", 1)[1] for q in through if ix.functions[q].cls}
    return {c.line for f in list(ix.functions.values()) + [None] for c in (f.calls if f else ix.module_calls)
            if (c.kind == "name" and (c.target in tops or c.target.rsplit(".", 1)[-1] in names and "." in c.target))
            or (c.kind == "self" and c.target in names)}


def _handed_compiled_lines(ix: ModuleIndex, compiled: Set[str], calls) -> Set[int]:
    """Lines of calls of a parameter that a call of its function in the file passes a compiled callable
    (`sample(compiled_unet, ...)`, `def sample(unet, ...)`: `unet(x, t)`)."""
    handed = {(c.target, i) for c in calls if c.kind == "name" for i, a in enumerate(c.args) if a in compiled or
              ix.qualify(strip_call(a)) in COMPILE}
    out = set()
    for q, f in ix.functions.items():
        params = [p for p in f.params if p not in ("self", "cls")] if f.cls else f.params
        held = {params[i] for i in range(len(params)) if (q, i) in handed or
                q == f"{f.cls}.__init__" and (f.cls, i) in handed}
        out |= {c.line for c in f.calls if c.kind == "name" and c.target in held}
        # a construction hands one to `__init__`, which keeps it (`self.dec = dec`): `self.dec(...)` in the class
        kept = {a for a, p in ix.classes[f.cls].param_attrs.items() if p in held} if f.cls in ix.classes else ()
        out |= {c.line for g in ix.functions.values() if kept and g.cls == f.cls for c in g.calls
                if c.kind == "self" and c.target in kept}
    return out
