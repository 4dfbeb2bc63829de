"""Tensors that require grad at one entry of a frame and not at another.

Dynamo guards every tensor a frame receives on its `requires_grad`. A function it compiles as a frame of its
own (one that breaks, or one called from a frame Dynamo skips) is entered once per call; where one call hands it
the data its caller was given (the model's input, which requires no grad) and another the output of a module
with parameters (they require grad, so its output does in grad mode), the second entry fails the guard and the frame
compiles again, once: `tensor 'x' requires_grad mismatch`. A layer that breaks, called on the input and then on
the previous layer's output (`self.conv2(relu(self.conv1(x)))`), or a loop that feeds each block the residual of
the last (`backcast = backcast - block(backcast)`) does this on the first training step. Measured on torch 2.13:
tests/test_grad_entries.py.

Only the entries from a root are judged (a function entered from outside traced code, with the user's data): a
caller that is itself reached from traced code may be handed a module's output as its own input, and then every
entry requires grad.
"""
from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

from dynlint.analysis.defs import argument

GRAD_OFF = ("no_grad", "inference_mode", "set_grad_enabled")
# torch layers with parameters beyond the tensor analysis's PARAMETRISED_LAYERS: their output requires grad
RECURRENT = frozenset({"RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell", "Transformer",
                       "TransformerEncoderLayer", "TransformerDecoderLayer"})
DEPTH = 6


def grad_entries(frames, ref, calls) -> Tuple[Tuple[str, int], ...]:
    """(parameter, line of the call whose argument requires grad) for each parameter of the frame function `ref`
    that one of its entries (`calls`: (caller, site, (call node, in a loop))) hands the caller's own input and
    another a module's output, or that a loop hands the input first and a module's output after."""
    fdef = frames.defs.definition(ref)
    if fdef is None:
        return ()
    names = [a.arg for a in fdef.args.posonlyargs + fdef.args.args]
    names = names[1:] if frames.project.function(ref).cls and names else names
    callers = frames.callers()
    out: List[Tuple[str, int]] = []
    for k, param in enumerate(names):
        seen = {}
        for caller, site, (call, _) in calls:
            root = call is not None and not callers.get(caller) and not _run_without_grad(frames, caller)
            expr = argument(call, param, k) if root else None
            state = _state(frames, caller, call, expr) if expr is not None else None
            if state:
                seen.setdefault(state, site.line)
        if "data first" in seen or {"data", "grad"} <= set(seen):
            out.append((param, seen.get("grad") or seen["data first"]))
    return tuple(out)


def _state(frames, caller, call: ast.Call, expr: ast.expr) -> Optional[str]:
    """"data" (made from the caller's parameters alone), "grad" (from a module's output), "data first" (a name a
    loop around the call hands the parameter first and a module's output after) or None (not known, or grad mode
    may be off there)."""
    cdef = frames.defs.definition(caller)
    if cdef is None or _grad_off(cdef, call):
        return None
    params, values, loops = frames.defs.bindings(caller)
    modules = _submodules(frames, caller)
    loop = max((lp for lp in loops if lp[0] <= call.lineno <= lp[1]), default=None, key=lambda lp: lp[0])
    if isinstance(expr, ast.Name) and loop is not None and expr.id in loop[2]:
        first = _origins(cdef, expr, loop[0], params, modules, 0)
        later = set().union(*(_origins(cdef, v, v.lineno + 1, params, modules, 1) for v in values.get(expr.id, ())
                              if loop[0] <= v.lineno <= loop[1]))
        return "data first" if first == {"param"} and later == {"module"} | (later & {"param"}) else None
    found = _origins(cdef, expr, call.lineno, params, modules, 0)
    return None if "unknown" in found else "grad" if "module" in found else "data" if found == {"param"} else None


def _origins(cdef: ast.AST, expr: ast.expr, line: int, params: Set[str], modules: Set[str], depth: int) -> Set[str]:
    """Where a tensor expression's value comes from, before `line`: "param" (a parameter of the caller not
    rebound), "module" (a call of a submodule, `self.conv1(x)`, or of a loop variable over a module list), or
    "unknown"."""
    if depth > DEPTH:
        return {"unknown"}
    if isinstance(expr, ast.Constant):
        return set()
    if isinstance(expr, ast.Name):
        bound = _last_binding(cdef, expr.id, line)
        if bound is None:
            return {"param"} if expr.id in params else {"unknown"}
        return _origins(cdef, bound, bound.lineno, params, modules, depth + 1)
    if isinstance(expr, (ast.BinOp, ast.UnaryOp)):
        parts = [expr.left, expr.right] if isinstance(expr, ast.BinOp) else [expr.operand]
        return set().union(*(_origins(cdef, p, line, params, modules, depth + 1) for p in parts))
    if isinstance(expr, ast.Subscript):
        return _origins(cdef, expr.value, line, params, modules, depth + 1)
    if not isinstance(expr, ast.Call) or any(isinstance(a, ast.Starred) for a in expr.args):
        return {"unknown"}
    func = expr.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        return {"module"} if func.attr in modules else {"unknown"}
    if isinstance(func, ast.Name) and func.id in modules:
        return {"module"}
    parts = list(expr.args)                 # (keywords are options: `p=`, `dim=`, `training=`)
    if isinstance(func, ast.Attribute) and not _namespace(func.value):
        parts.append(func.value)            # a tensor method: its receiver
    elif not (isinstance(func, ast.Attribute) and _namespace(func.value)):
        return {"unknown"}                  # a function of the project or elsewhere: not known here
    return set().union(*(_origins(cdef, p, line, params, modules, depth + 1) for p in parts
                         if not isinstance(p, (ast.Constant, ast.Tuple, ast.List))))


def _namespace(node: ast.AST) -> bool:
    """`torch`, `F`, `torch.nn.functional`: a namespace of torch functions (by the usual names)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in ("torch", "F", "nn")


def _last_binding(cdef: ast.AST, name: str, line: int) -> Optional[ast.expr]:
    best = None
    for n in ast.walk(cdef):
        if isinstance(n, ast.Assign) and n.lineno < line and (best is None or n.lineno > best.lineno):
            for t in n.targets:
                if isinstance(t, ast.Name) and t.id == name or \
                        isinstance(t, ast.Tuple) and any(isinstance(e, ast.Name) and e.id == name for e in t.elts):
                    best = n
    return best.value if best is not None else None


def _submodules(frames, caller) -> Set[str]:
    """The attributes of the caller's class that hold modules with parameters (`self.conv1`), and the names its
    loops bind to the items of one (`for block in self.blocks`)."""
    fn = frames.project.function(caller)
    out: Set[str] = set()
    if not fn.cls:
        return out
    for path, cls in [(caller[0], fn.cls), *frames.project.bases(caller[0], fn.cls)]:
        info = frames.project.by_path[path].classes.get(cls)
        for attr, ctors in (info.attrs.items() if info else ()):
            if any(_has_parameters(frames, frames.project.by_path[path], c, 0) for c in ctors):
                out.add(attr)
    cdef = frames.defs.definition(caller)
    for n in ast.walk(cdef) if cdef is not None else ():
        if isinstance(n, ast.For):
            counted = isinstance(n.iter, ast.Call) and getattr(n.iter.func, "id", "") == "enumerate" and n.iter.args
            it = n.iter.args[0] if counted else n.iter
            target = n.target.elts[-1] if counted and isinstance(n.target, ast.Tuple) and n.target.elts else n.target
            if isinstance(it, ast.Attribute) and isinstance(it.value, ast.Name) and it.value.id == "self" and \
                    it.attr in out and isinstance(target, ast.Name):
                out.add(target.id)
    return out


def _has_parameters(frames, ix, ctor: str, depth: int) -> bool:
    """Does what `ctor` builds hold parameters: a torch layer with weights (`nn.Linear`), an `nn.Parameter`, or
    a class of the project whose attributes hold one of those (a few classes deep), and whose `forward` does not
    return only results that carry no grad (`y.nonzero()`, a comparison)?"""
    from dynlint.analysis.tensors.torch_api import PARAMETRISED_LAYERS, TENSOR_CTORS    # (it imports regions)
    project = frames.project
    q = ix.qualify(ctor)
    if q in TENSOR_CTORS or q.startswith("torch.nn.") and q.rpartition(".")[2] in PARAMETRISED_LAYERS | RECURRENT:
        return True
    found = project.resolve(ix, ctor) if depth < 3 else None
    if not found or found[0] != "class":
        return False
    path, info = found[1]
    owner = project.by_path[path]
    return (any(_has_parameters(frames, owner, c, depth + 1) for cs in info.attrs.values() for c in cs) or
            bool(info.registered)) and not _gradless_output(frames, path, info.name)


# tensor methods whose result carries no grad: indices, integers, booleans, detached values
NO_GRAD_RESULTS = frozenset({"nonzero", "argmax", "argmin", "argsort", "long", "int", "bool", "short", "byte",
                             "detach", "sign", "round", "floor", "ceil", "eq", "ne", "lt", "le", "gt", "ge"})


def _gradless_output(frames, path: str, cls: str) -> bool:
    """Every `return` of the class's `forward` is a result that carries no grad (`return y.nonzero()`, a
    comparison): the module's output does not require grad, whatever its parameters."""
    ref = frames.project.method(path, cls, "forward")
    fdef = frames.defs.definition(ref) if ref else None
    values = [n.value for n in ast.walk(fdef) if isinstance(n, ast.Return)] if fdef is not None else []
    return bool(values) and all(isinstance(v, ast.Compare) or isinstance(v, ast.Call) and
                                isinstance(v.func, ast.Attribute) and v.func.attr in NO_GRAD_RESULTS
                                for v in values)


def _run_without_grad(frames, root) -> bool:
    """Every call of the compiled `root` that the project makes (`m = torch.compile(Model())` ... `m(x)`) runs
    with grad mode off: nothing it gets or makes requires grad."""
    from dynlint.analysis.regions import compiled_elsewhere     # (regions builds on the frame model)
    sites = [(path, c) for path, _, calls in compiled_elsewhere(frames.project, root) for c in calls]
    for path, c in sites:
        ix = frames.project.by_path[path]
        fn = ix.function_at(c.line)
        fdef = frames.defs.definition((path, fn.qualname)) if fn is not None else None
        call = next((n for n in ast.walk(fdef) if isinstance(n, ast.Call) and n.lineno == c.line), None) \
            if fdef is not None else None
        if call is None or not _grad_off(fdef, call):
            return False
    return bool(sites)


def _grad_off(cdef: ast.AST, call: ast.Call) -> bool:
    """The caller turns grad mode off (or sets it) around the call, or for all of it."""
    heads = [d for d in getattr(cdef, "decorator_list", [])]
    heads += [i.context_expr for n in ast.walk(cdef) if isinstance(n, ast.With) and
              n.lineno <= call.lineno <= (n.end_lineno or n.lineno) for i in n.items]
    return any(ast.unparse(h).split("(")[0].rpartition(".")[2] in GRAD_OFF for h in heads)
