"""What object a name or `self.<attr>` holds, as the constructions that made it: `opt = torch.optim.SGD(...)` in
the function, a parameter whose every caller in the project passes one it made, a name of an enclosing
function (a closure), `self.opt` built in `__init__` or handed to it. Read from the project's index (no
parsing); the rules ask it for the class of a method call's receiver (`opt.zero_grad()`).

A value stays unknown (None) where anything else can reach it: a caller that passes something else or a name
not bound to a construction, `*args`, no caller at all. There, a parameter's annotation naming project classes
(`scheduler: DDIMScheduler`) is the declared type of what it holds, as a type checker takes it: a library's
users build what its pipelines keep.
"""
from __future__ import annotations

from typing import List, Optional, Set, Tuple

from dynlint.linter.index import CallSite, FunctionInfo, ModuleIndex
from dynlint.linter.project import Project


def passed_constructions(project: Project, ix: ModuleIndex, fn: FunctionInfo,
                         param: str) -> Optional[List[Tuple[ModuleIndex, str]]]:
    """The constructions the project's calls of `fn` pass as `param`, each made where it is passed (`s = Sampler()`
    ... `denoise(x, s)`, or `denoise(x, Sampler())`): (the caller's file, the constructor's dotted name as written
    there). Looked for in fn's own file and the files importing its module or it; None when a call passes
    anything else (or the parameter is not a positional one of `fn`); [] when nothing calls it. Searched once per
    function and parameter in a run."""
    memo = project.per_run(_passed)
    key = (ix.path, fn.qualname, param)
    if key not in memo:
        memo[key] = None                # (a chain of parameters and attributes back to itself: not known)
        memo[key] = _search(project, ix, fn, param)
    return memo[key]


def _passed() -> dict:
    """(path, function, parameter) -> what `passed_constructions` found."""
    return {}


def _search(project: Project, ix: ModuleIndex, fn: FunctionInfo,
            param: str) -> Optional[List[Tuple[ModuleIndex, str]]]:
    params = [p for p in fn.params if p not in ("self", "cls")] if fn.cls else list(fn.params)
    if param not in params:
        return None
    k, ref = params.index(param), (ix.path, fn.qualname)
    # a class's __init__ is called by calling the class
    init_of = fn.qualname[:-len(".__init__")] if fn.cls and fn.qualname == f"{fn.cls}.__init__" else ""
    rels = {ix.path} | set(project.facts.importers.get(ix.module, ())) | \
        set(project.facts.importers.get(f"{ix.module}.{init_of or fn.qualname}", ()))
    found: List[Tuple[ModuleIndex, str]] = []
    wanted = init_of.rpartition(".")[2] if init_of else fn.qualname.rpartition(".")[2]
    for rel in sorted(rels):
        cix = project.by_path.get(rel)
        if cix is None:
            continue
        scopes = [(None, cix.module_calls, cix.module_instances)] + \
            [(f, f.calls, dict(cix.module_instances, **f.instances)) for f in cix.functions.values()]
        for caller, calls, held in scopes:
            for c in calls:
                if cix.qualify(c.target).rpartition(".")[2] != wanted and c.target not in held:
                    continue            # (a call of another name, not an alias: cannot run `fn`)
                r = _call_target(project, cix, caller, calls, held, c, bool(fn.cls))
                if not r or (r != ("function", ref) if not init_of else
                             (r[0] != "class" or r[1][0] != ix.path or r[1][1].name != init_of)):
                    continue
                if c.constants.get(k) == "None":
                    continue                    # (None holds no instance: where it is passed, nothing is called)
                arg = c.args[k] if k < len(c.args) else ""
                made = [arg[:-2]] if arg.endswith("()") and "(" not in arg[:-2] else held.get(arg, ()) or \
                    _attribute_passed(project, cix, caller, arg)
                if not made:
                    return None                 # something else passed: not known
                found += [(cix, m) for m in made if (cix, m) not in found]
    return found


def _attribute_passed(project: Project, ix: ModuleIndex, caller: Optional[FunctionInfo], arg: str) -> List[str]:
    """What a method passes from an attribute of its own (`retrieve_timesteps(self.scheduler, n)`): what
    `self.scheduler` holds (`held_by_attribute`), qualified; empty when not known."""
    if caller is None or not caller.cls or caller.cls not in ix.classes or not arg.startswith("self.") or \
            arg.count(".") != 1:
        return []
    return sorted(held_by_attribute(project, ix, caller.cls, arg[5:]))


def _call_target(project: Project, ix: ModuleIndex, caller: Optional[FunctionInfo], calls, held, c: CallSite,
                 method: bool):
    """What the call `c` of `caller` (None: the module level) runs, as `project.resolve` gives it: a name, a
    name bound to `torch.compile(f)`, or (`method`) a method of a local instance."""
    if c.kind != "name":
        return None
    r = project.resolve(ix, c.target, caller.qualname if caller else "")
    if not r and "torch.compile" in {ix.qualify(m) for m in held.get(c.target, ())}:
        r = _compiled_by(project, ix, caller, calls, c)
    if not r and method:
        r = _instance_method(project, ix, held, c.target)
    return r


def _instance_method(project: Project, ix: ModuleIndex, held, target: str):
    """`trainer.fit(...)` where the scope binds `trainer` to one construction of a project class (or
    `Trainer(...).fit(...)`, on the construction itself): that class's method, resolved as `project.resolve`
    resolves names; None when not known."""
    head, _, meth = target.partition(".")
    made = [head[:-2]] if head.endswith("()") and "(" not in head[:-2] else held.get(head, ())
    if len(made) != 1 or not meth or "." in meth:
        return None
    r = project.resolve(ix, made[0])
    ref = project.method(r[1][0], r[1][1].name, meth) if r and r[0] == "class" else None
    return ("function", ref) if ref else None


def _compiled_by(project: Project, ix: ModuleIndex, caller: Optional[FunctionInfo], calls, call):
    """What a call of a name bound to `torch.compile(f)` in the same scope runs (`step = torch.compile(
    eval_step)` ... `step(model, metrics)` calls `eval_step`): the resolved `f`, from the last such compile
    above the call (the one bound to the called name, where the scope records it); None when not known."""
    wrapped = caller.compiled.get(call.target) if caller is not None else None
    if wrapped:
        return project.resolve(ix, wrapped, caller.qualname)
    made = [c for c in calls if c.kind == "name" and c.line <= call.line and c.args and c.args[0] and
            ix.qualify(c.target) == "torch.compile"]
    if not made:
        return None
    return project.resolve(ix, max(made, key=lambda c: c.line).args[0], caller.qualname if caller else "")


def held_by_name(project: Project, ix: ModuleIndex, fn: Optional[FunctionInfo], name: str) -> Set[str]:
    """The qualified constructors of what `name` holds where `fn` (None: the module level) reads it: a local
    construction, a parameter's callers' constructions, else the same asked of the enclosing function (a
    closure) and of the module level. Empty when not known."""
    while fn is not None:
        if name in fn.instances:
            return {ix.qualify(c) for c in fn.instances[name]}
        if name in fn.params:
            passed = passed_constructions(project, ix, fn, name)
            return {c.qualify(m) for c, m in passed} if passed else declared(project, ix, fn, name)
        fn = ix.functions.get(fn.nested_in) if fn.nested_in else None
    return {ix.qualify(c) for c in ix.module_instances.get(name, ())}


def held_by_attribute(project: Project, ix: ModuleIndex, cls: str, attr: str) -> Set[str]:
    """The qualified constructors of what `self.<attr>` holds in class `cls` of `ix` (or a base of it in the
    project): what the class constructs into it, or what the project's constructions of the class pass to the
    `__init__` parameter it keeps. Empty when not known."""
    for path, name in [(ix.path, cls), *project.bases(ix.path, cls)]:
        cix = project.by_path[path]
        info = cix.classes.get(name)
        if info is None:
            continue
        if info.attrs.get(attr):
            return {cix.qualify(c) for c in info.attrs[attr]}
        param, init = _kept(project, path, info, attr), cix.functions.get(f"{name}.__init__")
        if param and init is not None:
            passed = passed_constructions(project, cix, init, param)
            return {c.qualify(m) for c, m in passed} if passed else declared(project, cix, init, param)
    return set()


def _kept(project: Project, path: str, info, attr: str) -> Optional[str]:
    """The `__init__` parameter the class keeps as `self.<attr>`: `self.attr = param`, or `self.register(attr=
    param)` where that method (of the class or a base) sets the attributes its keywords name."""
    if attr in info.param_attrs:
        return info.param_attrs[attr]
    method, param = info.keyword_params.get(attr, ("", ""))
    ref = project.method(path, info.name, method) if method else None
    return param if ref and project.function(ref).sets_keywords else None


def declared(project: Project, ix: ModuleIndex, fn: FunctionInfo, param: str) -> Set[str]:
    """The project classes the parameter's annotation names (`scheduler: DDIMScheduler`, `Optional[Sched]`,
    `Union[A, B]`), qualified: the declared type of what it holds where no construction in the project reaches
    it (a library's users build it, or a factory does: `Sched.from_config(...)`). Empty when it names none."""
    found = set()
    for name in fn.annotations.get(param, ()):
        r = project.resolve(ix, name)
        if r and r[0] == "class":
            found.add(ix.qualify(name))
    return found
