"""Compiled callables and values handed through a function of the file, for the site rules.

A parameter that every call of its function passes a compiled callable holds that callable: `unet(x, t)` in
`def sample(unet, timesteps)`, called as `sample(torch.compile(unet), ...)` or with a compiled alias, is a call
of the compiled frame (`compiled_parameter`). A call of a function that hands one of its own parameters, unchanged,
to a compiled call passes that argument to the compiled code (`learner.learn(buffer, sample_fn, 8, beta)` where
`learn` calls `sample_fn(batch_size, beta)`): the caller's value is what Dynamo guards (`handed_arguments`).
Both read the file's syntax (`ast`) and index; calls that unpack arguments are not followed.
"""
from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional, Set, Tuple

import libcst as cst

from dynlint.analysis import guard_lines
from dynlint.analysis.names import COMPILE


def _own_nodes(fn: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a def's body, nested defs and classes left out (they are functions of their own)."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield n
        stack.extend(ast.iter_child_nodes(n))


def _params(info) -> List[str]:
    return [p for p in info.params if p not in ("self", "cls")] if info.cls else list(info.params)


def _bind(call: ast.Call, params: List[str]) -> Optional[Dict[str, ast.expr]]:
    """{parameter: expression} a call passes by position or keyword; None when it unpacks arguments."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    out = {params[i]: a for i, a in enumerate(call.args) if i < len(params)}
    out.update({k.arg: k.value for k in call.keywords if k.arg in params})
    return out


def _assigned(fn: Optional[ast.AST], how=(ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For)) -> Set[str]:
    """The names a def's own body binds by the statements `how` (a parameter among them no longer holds what
    its callers pass)."""
    out: Set[str] = set()
    for n in _own_nodes(fn) if fn is not None else ():
        if isinstance(n, how):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            out |= {x.id for t in targets for x in ast.walk(t) if isinstance(x, ast.Name)}
    return out


def rebound_in(ctx, qualname: str) -> Set[str]:
    """The names the file's function `qualname` assigns in its own body."""
    return _assigned(_def_of(ctx, qualname))


def _def_of(ctx, qualname: str) -> Optional[ast.AST]:
    ix = ctx.index
    info = ix.functions.get(qualname) if ix is not None else None
    return guard_lines.function_at(ctx.source or "", info.def_line) if info is not None else None


def _calls_of(ctx, qualname: str) -> Optional[List[Tuple[str, ast.Call]]]:
    """(the caller's qualname, the call) for each call of the file's function `qualname` in a function of the file:
    `f(...)`, `self.m(...)` in a method of its class, `obj.m(...)` where the caller builds `obj` from its class.
    None when the function's name is used otherwise too (passed, stored: its calls are not all known)."""
    ix = ctx.index
    info = ix.functions[qualname]
    cls, name = info.cls, qualname.rsplit(".", 1)[-1]
    out, other_uses = [], 0
    for q, caller in ix.functions.items():
        fn = _def_of(ctx, q)
        if fn is None or (not cls and (name in caller.params or name in _assigned(fn))):
            continue            # (a local `sample` of another function is not this one)
        for n in _own_nodes(fn):
            if not cls and isinstance(n, ast.Name) and n.id == name and "." not in qualname:
                other_uses += 1
            if not isinstance(n, ast.Call):
                continue
            f = n.func
            if not cls and isinstance(f, ast.Name) and f.id == name and "." not in qualname:
                out.append((q, n))
            elif cls and isinstance(f, ast.Attribute) and f.attr == name and isinstance(f.value, ast.Name) and (
                    (f.value.id == "self" and caller.cls == cls) or ix.built(f.value.id, caller) == [cls]):
                out.append((q, n))
    if other_uses > len(out):
        return None
    return out


def compiled_parameter(rule, name: str) -> Optional[str]:
    """The compiled entry (a qualname of this file) that the parameter `name` of the function the rule visits
    holds, when every call of that function in the file passes it the same compiled callable (a compiled alias,
    a compiled module or function of the caller); None otherwise."""
    ix, here = rule.ctx.index, rule.ctx.qualname or ""
    info = ix.functions.get(here) if ix is not None else None
    if info is None or name not in _params(info) or name in rebound_in(rule.ctx, here):
        return None
    calls = _calls_of(rule.ctx, here)
    entries = set()
    for caller, call in calls or ():
        bound = _bind(call, _params(info))
        value = bound.get(name) if bound is not None else None
        if not isinstance(value, ast.Name) or not _compiled_in(rule, value.id, caller):
            return None
        entries.add(rule.compiled_entry(value.id, scope=caller))
    return entries.pop() if len(entries) == 1 and None not in entries else None


def passed_values(ctx, qualname: str, name: str) -> List[Optional[ast.expr]]:
    """What each call of the file's function `qualname` in the file passes its parameter `name` (None where a
    call leaves it out); empty when its calls are not all known or one unpacks its arguments."""
    info = ctx.index.functions.get(qualname) if ctx.index is not None else None
    calls = _calls_of(ctx, qualname) if info is not None else None
    bound = [_bind(call, _params(info)) for _, call in calls or ()]
    return [] if None in bound else [b.get(name) for b in bound]


def passed_elements_kind(ctx, name: str) -> Optional[str]:
    """"int", "float", "str" or "bool" when `name`, a parameter of the function being checked, is given by every
    call of that function in the file a list or tuple of literals of that one kind, written at the call or bound
    once to a name there (`timesteps = [999, 666, 333]` ... `run(unet, timesteps)`): what iterating it yields."""
    ix, here = ctx.index, ctx.qualname or ""
    info = ix.functions.get(here) if ix is not None else None
    if info is None or name not in _params(info) or name in rebound_in(ctx, here):
        return None
    kinds = set()
    for caller, call in _calls_of(ctx, here) or ():
        bound = _bind(call, _params(info))
        value = bound.get(name) if bound is not None else None
        if isinstance(value, ast.Name):
            value = _bound_once(_def_of(ctx, caller), value.id)
        if not isinstance(value, (ast.List, ast.Tuple)) or not value.elts:
            return None
        kinds |= {_LITERAL_KINDS.get(type(e.value)) if isinstance(e, ast.Constant) else None for e in value.elts}
    return kinds.pop() if len(kinds) == 1 and None not in kinds else None


_LITERAL_KINDS = {int: "int", float: "float", str: "str", bool: "bool"}


def _bound_once(fn: Optional[ast.AST], name: str) -> Optional[ast.expr]:
    """What the def's one assignment to `name` binds (None when it assigns it otherwise, or not once)."""
    values = [n.value for n in (_own_nodes(fn) if fn is not None else ())
              if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)]
    return values[0] if len(values) == 1 and name not in _assigned(fn, (ast.AugAssign, ast.For)) else None


def _compiled_in(rule, name: str, scope: str) -> bool:
    from dynlint.rules.recompiles.common import compile_call
    return name in rule.compiled_names() or compile_call(rule.ctx, name, scope) is not None


def having(ix, made: List[str], attr: str) -> List[str]:
    """The classes of the file among those an expression builds (`AmpTrainer(ConvNet(), cfg)` builds both) that
    define the method or compiled attribute `attr`: the one the built object's `.attr` is."""
    return [c for c in made if c in ix.classes and (f"{c}.{attr}" in ix.functions or attr in ix.classes[c].compiled)]


def callee_of(rule, call: cst.Call) -> Optional[str]:
    """The qualname of the file's function a call runs: `f(...)`, `self.m(...)` in a method of its class,
    `obj.m(...)` where the function the rule visits (or the module) builds `obj` from a class of the file."""
    ix, f, nested = rule.ctx.index, call.func, None
    here = ix.functions.get(rule.ctx.qualname or "") if ix is not None else None
    if ix is None:
        return None
    if isinstance(f, cst.Name):
        nested = f"{rule.ctx.qualname}.{f.value}"          # a function the calling function defines
        q = nested if rule.ctx.qualname and nested in ix.functions and not ix.functions[nested].cls else f.value
    elif isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name):
        if f.value.value == "self":
            made = [here.cls] if here is not None and here.cls else []
        else:
            made = having(ix, ix.built(f.value.value, here), f.attr.value)
        q = f"{made[0]}.{f.attr.value}" if len(made) == 1 else ""
    else:
        return None
    return q if q in ix.functions and (ix.functions[q].cls or "." not in q or q == nested) else None


def _attr(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else ""


def _compiled_callable(ix, info, attr: str, source: Optional[str] = None) -> Optional[str]:
    """The frame a call of `self.<attr>` runs when the attribute holds a function or a module of this file
    compiled (`self.step_fn = torch.compile(train_step)`: `train_step`; `self.policy =
    torch.compile(Policy())`: `Policy.forward`), or keeps an `__init__` parameter that every construction of
    the class in `source` passes such a callable (`self.dec = dec` ... `Runner(torch.compile(Decoder()))`)."""
    held = info.compiled_callables.get(attr) if info is not None else None
    if held is None and info is not None and attr in info.param_attrs and source:
        held = _constructed_with(ix, source, info.name, info.param_attrs[attr])
    if held in ix.functions and not ix.functions[held].cls:
        return held
    return f"{held}.forward" if held in ix.classes and f"{held}.forward" in ix.functions else None


def _constructed_with(ix, source: str, cls: str, param: str) -> Optional[str]:
    """What every construction of the file's class `cls` in `source` passes its `__init__` parameter `param`
    compiled (`Runner(torch.compile(Decoder()), ...)`: `Decoder`, as for `torch.compile(dec)` where `dec =
    Decoder()`; `torch.compile(step)`: `step`); None when a
    construction passes anything else, unpacks its arguments, or there is none."""
    init, tree = ix.functions.get(f"{cls}.__init__"), guard_lines.parsed(source)
    if init is None or tree is None:
        return None
    held = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == cls:
            bound = _bind(n, _params(init))
            value = bound.get(param) if bound is not None else None
            wrapped = value.args[0] if isinstance(value, ast.Call) and value.args and \
                ix.qualify(guard_lines.dotted(value.func) or "") in COMPILE else None
            name = guard_lines.dotted(wrapped.func if isinstance(wrapped, ast.Call) else wrapped) if wrapped else None
            built = ix.built(name, ix.function_at(n.lineno)) if name and name not in ix.functions else []
            held.add(built[0] if len(built) == 1 else name)     # `torch.compile(decoder)`, `decoder = Net(...)`
    return held.pop() if len(held) == 1 and None not in held else None


def compiled_attribute(ix, cls: str, attr: str, source: Optional[str] = None) -> Optional[str]:
    """`Cls.m` when the attribute `attr` of the file's class `cls` holds its method `m` compiled (`self.fwd =
    torch.compile(self.m)`, or `m` itself rebound or decorated), else None; given the file's `source`, also a
    compiled callable its constructions hand in (`_compiled_callable`)."""
    info = ix.classes.get(cls)
    held = info.compiled.get(attr) if info is not None else None
    q = f"{cls}.{held}" if held else f"{cls}.{attr}"
    fn = ix.functions.get(q)
    if fn is None:
        return _compiled_callable(ix, info, attr, source)
    from dynlint.analysis.regions import compiled_methods
    return q if held or attr in compiled_methods(ix) else None


def handed_arguments(rule, call: cst.Call) -> List[Tuple[cst.Arg, str, str, str]]:
    """(an argument of `call`, the compiled entry it reaches, the entry's parameter it binds, the compiled callee's
    name) for each argument that the called function of the file hands on unchanged to a compiled call: to a
    compiled function or alias of the file, or to one of its own parameters that this call passes a compiled
    callable."""
    return [(arg, entry, param, inner) for arg, entry, param, inner, field in handed_on(rule, call) if not field]


def handed_on(rule, call: cst.Call) -> List[Tuple[cst.Arg, str, str, str, str]]:
    """`handed_arguments`, and also the attributes of an argument the function hands on (`sample(logits,
    cfg.top_k)`): (the argument, the entry, its parameter, the callee, the attribute, or "" for the argument
    itself)."""
    from dynlint.rules.recompiles.common import bound_parameter
    ix, q = rule.ctx.index, callee_of(rule, call)
    fn = _def_of(rule.ctx, q) if q else None
    if fn is None:
        return []
    info = ix.functions[q]
    outer = {bound_parameter(info, call, a): a for a in call.args if not a.star}
    out = []
    for n in _own_nodes(fn):
        if isinstance(n, ast.Call) and info.cls and guard_lines.dotted(n.func) == f"self.{_attr(n.func)}":
            inner = f"self.{_attr(n.func)}"     # `self.fwd(...)`: an attribute holding a compiled method
            entry = compiled_attribute(ix, info.cls, _attr(n.func), rule.ctx.source)
        elif not (isinstance(n, ast.Call) and isinstance(n.func, ast.Name)):
            continue
        elif n.func.id in _params(info):    # a compiled callable this call passes (`sample_fn`)
            inner = n.func.id
            given = outer.get(inner)
            value = given.value if given is not None else None
            compiled = isinstance(value, cst.Name) and _compiled_in(rule, value.value, rule.ctx.qualname or "")
            entry = rule.compiled_entry(value.value) if compiled else None
        else:
            inner = n.func.id
            entry = rule.compiled_entry(inner) if inner in rule.compiled_names() else None
        entry_info = ix.functions.get(entry or "")
        bound = _bind(n, _params(entry_info)) if entry_info is not None else None
        for param, expr in (bound or {}).items():
            field = expr.attr if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) else ""
            expr = expr.value if field else expr
            if isinstance(expr, ast.Name) and expr.id in outer and expr.id not in _assigned(fn):
                out.append((outer[expr.id], entry, param, inner, field))
    for inner, free in _compiled_closures(rule, q, fn):
        out.extend((outer[p], f"{q}.{inner}", p, inner, "") for p in free if p in outer)
    return out


def _compiled_closures(rule, q: str, fn: ast.AST) -> Iterator[Tuple[str, List[str]]]:
    """(name, the parameters of `fn` it reads as free variables) for each function `fn` defines and compiles
    (`@torch.compile def scale(x): return x * factor`, or `torch.compile(scale)` in `fn`): every closure a
    call of `fn` makes shares one code object, so Dynamo guards each cell's value at its first read, and a
    closure made with a new value compiles again there (measured)."""
    from dynlint.rules.recompiles.common import _decorated_compile
    ix = rule.ctx.index
    wrapped = {n.args[0].id for n in _own_nodes(fn) if isinstance(n, ast.Call) and n.args and
               isinstance(n.args[0], ast.Name) and ix.qualify(guard_lines.dotted(n.func) or "") in COMPILE}
    outer = set(_params(ix.functions[q])) - _assigned(fn)
    for inner in (n for n in ast.iter_child_nodes(fn) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        if not (_decorated_compile(ix, f"{q}.{inner.name}") or inner.name in wrapped):
            continue
        own = {a.arg for a in inner.args.args + inner.args.kwonlyargs} | _assigned(inner)
        free = [p for p in sorted(outer - own) if guard_lines.guard_read(rule.ctx.source or "", inner, p)]
        if free:
            yield inner.name, free
