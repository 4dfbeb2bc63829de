"""Python values a graph break makes, followed through the frame model (analysis/frames.py): values a function
that breaks returns, into the caller that unpacks them and the function it hands them to next (`Frame.host`,
DYN511); and numbers a break makes (or a breaking function returns) that their function still needs where the
graph breaks again (`Frame.held`, DYN520). Each works on a `Frames` model, `model`."""
from __future__ import annotations

import ast
from typing import Dict, List, Set, Tuple

from dynlint.analysis.defs import body_nodes, host_assigned_at, host_call, param_of, returned, unpacked
from dynlint.analysis.resumed import held_across
from dynlint.linter.project import FuncRef

HOST_CODES = frozenset({"DYN201", "DYN202", "DYN203"})     # .item(), int(t)/float(t), .tolist(): Python values
# breaks whose call gives a Python number: those, the clock (DYN307), `math` functions of a tensor (DYN205)
NUMBER_CODES = HOST_CODES | {"DYN205", "DYN307"}


def host_flow(model, found, callers) -> Dict[FuncRef, Tuple[Tuple[str, str, int], ...]]:
    """Python values that a break makes and its function returns (`sizes = counts.tolist()` ...
    `return x, sizes`): the caller's graph ends at the call, and the code Dynamo resumes after it receives
    them. Where the caller unpacks them, and the parameter of what it passes them to next (inlined into
    the resumed frame), they are values that frame is guarded on (read by DYN511). Kept between runs
    while the breaks, the call graph around them and the files read are unchanged."""
    hosts = [(ref, f) for _, ref, f in found if f.code in HOST_CODES]
    asked = tuple((ref, f.path, f.line, tuple(
        (c, s.line, tuple((later.line, callee) for later, callee in model.edges(c) if later is not None))
        for c, s in callers.get(ref, ()) if s is not None)) for ref, f in hosts)
    return model._reuse(("host",), asked, lambda: _host_flow_now(model, hosts, callers))

def _host_flow_now(model, hosts, callers) -> Dict[FuncRef, Tuple[Tuple[str, str, int], ...]]:
    out: Dict[FuncRef, List[Tuple[str, str, int]]] = {}
    for ref, f in hosts:
        fdef = model.defs.definition(ref)
        name = host_assigned_at(fdef, f.line) if fdef is not None else None
        positions = returned(fdef, name) if name else set()
        if len(positions) != 1:
            continue
        k = positions.pop()
        for caller, site in callers.get(ref, ()):
            call = model.defs.call(caller, site)[0] if site is not None else None
            held = unpacked(model.defs.definition(caller), call, k) if call is not None else None
            if held is None:
                continue
            out.setdefault(caller, []).append((held, f.path, f.line))
            for later, callee in model.edges(caller):
                after = model.defs.call(caller, later)[0] if later is not None and later.line > site.line else None
                param = param_of(model.defs.definition(callee), after, held, bool(model.project.function(callee).cls)) \
                    if after is not None else None
                if param:
                    out.setdefault(callee, []).append((param, f.path, f.line))
    return {r: tuple(dict.fromkeys(v)) for r, v in out.items()}

def numbers_held(model, found, frames, callers) -> Dict[FuncRef, Tuple[Tuple[str, int, int], ...]]:
    """The Python numbers a break makes (`t0 = time.perf_counter()`), or a call of a function that breaks and
    returns one (`size = model.torch_choice(...)`, `-> int`), that their function still needs where the graph
    breaks next, by itself or in a call of a function that breaks (resumed.held_across): (name, line made,
    line of that break), per function. Kept between runs while the breaks and the files are unchanged."""
    stops: Dict[FuncRef, Set[int]] = {}
    for _, ref, f in found:
        stops.setdefault(ref, set()).add(f.line)
    for path, line in model.entered:
        owner = model._owner(path, line)
        if owner is not None and model._runs((path, owner), line):
            stops.setdefault((path, owner), set()).add(line)
    made = [(ref, f.line, False) for _, ref, f in found if f.code in NUMBER_CODES]
    made += [(caller, site.line, True) for ref in sorted(frames) if _returns_number(model, ref)
             for caller, site in callers.get(ref, ()) if site is not None and model._runs(caller, site.line)]
    asked = tuple((ref, line, tuple(sorted(stops[ref])), call) for ref, line, call in made if ref in stops)
    return model._reuse(("held",), asked, lambda: _numbers_held_now(model, asked))

def _returns_number(model, ref: FuncRef) -> bool:
    """The function says it returns an int, float or bool (`-> int`), or every return is a Python number made
    there (`int(...)`, `float(...)`, `round(...)`, `len(...)`, `.item()`)."""
    fdef = model.defs.definition(ref)
    if fdef is None:
        return False
    if isinstance(fdef.returns, ast.Name):
        return fdef.returns.id in ("int", "float", "bool")
    values = [n.value for n in body_nodes(fdef) if isinstance(n, ast.Return)]
    return bool(values) and all(v is not None and isinstance(v, ast.Call) and (
        host_call(v) or isinstance(v.func, ast.Name) and v.func.id in ("round", "len")) for v in values)

def _numbers_held_now(model, asked) -> Dict[FuncRef, Tuple[Tuple[str, int, int], ...]]:
    out: Dict[FuncRef, List[Tuple[str, int, int]]] = {}
    for ref, line, stops, call in asked:
        fdef = model.defs.definition(ref)
        ix = model.project.by_path.get(ref[0])
        known = (lambda n: n in ix.imports or n in ix.functions or n in ix.classes or
                 n in ix.module_instances or n in ix.assigned_calls) if ix is not None else (lambda n: False)
        held = held_across(fdef, line, stops, known, call) if fdef is not None else None
        if held is not None:
            out.setdefault(ref, []).append((held[0], line, held[1]))
    return {r: tuple(dict.fromkeys(v)) for r, v in out.items()}
