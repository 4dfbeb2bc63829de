"""DYN501 across files: a method compiled as an entry (`compiled = [...]` in the settings, or `@torch.compile`)
that indexes a tensor with a parameter (`self.alphas_cumprod[timestep]`), where every tensor that the calls of a
compiled alias or through what holds an instance pass to it is an element of a tensor a Python loop iterates
(`for t in self.scheduler.timesteps: ... self.scheduler.step(out, t, x)`, `analysis.tensors.foreign.
passed_rows`): a 0-d tensor, which Dynamo turns into a Python int at the subscript and guards on by value
(`timestep.item() == 900`). A name made from it by adding or subtracting (`prev_timestep = timestep - ratio`) is
guarded at its own subscript. And a Python number or string a loop of another file passes (`for batch_idx, batch in
enumerate(batches): training_step(batch, batch_idx)` with `training_step = torch.compile(module.training_step)`):
guarded at the method's first read of it (`loop_values`)."""
from __future__ import annotations

import ast
import bisect
from typing import Iterator, List, Optional, Tuple

import libcst as cst

from dynlint.analysis import guard_lines
from dynlint.analysis.tensors import TENSOR
from dynlint.analysis.tensors.foreign import alias_calls, direct_calls, passed_rows, receiver_calls
from dynlint.analysis.tensors.syntax import bound_arguments
from dynlint.linter.walker import walk

Span = Tuple[int, int, int, int]


def entry_methods(ctx, functions: bool = False) -> Iterator[tuple]:
    """(qualname, index entry) of each method defined in the unit that Dynamo compiles as an entry of its own
    (compiled from another file, or by the `compiled = [...]` setting): what calls in other files pass it is
    guarded in it. With `functions`, the unit's top-level functions compiled so too."""
    ix, unit = ctx.index, ctx.unit
    if ix is None or ctx.project is None:
        return
    first, last = unit.line_offset + 1, unit.line_offset + unit.text.count("\n") + 1
    memo = ctx.project.per_run(_entries)
    key = (ix.path, functions)
    if key not in memo:                 # (once per file: every unit of it asks)
        memo[key] = sorted((info.def_line, qual, info) for qual, info in ix.functions.items()
                           if not info.nested_in and (info.cls or functions) and ctx.regions.get(qual) == (qual,))
    entries = memo[key]
    start = bisect.bisect_left(entries, (first,))
    for line, qual, info in entries[start:]:
        if line > last:
            break
        yield qual, info


def _entries() -> dict:
    """(file, with functions) -> [(def line, qualname, index entry)] of its entry methods (`entry_methods`)."""
    return {}


def row_index_guards(ctx, tensors) -> Iterator[Tuple[str, str, Span, List[Tuple[str, int, str]]]]:
    """(the method, the subscript's text, its span, [(file, line, loop variable) of the calls]) for each guard of
    a method of the unit that is compiled as an entry."""
    source = ctx.source or ""
    for qual, info in entry_methods(ctx):
        if qual.endswith(".forward"):
            continue
        fn, fdef = guard_lines.function_at(source, info.def_line), tensors._helper_def(info)
        params = [p for p in info.params if p not in ("self", "cls")]
        for param in params if fn is not None and fdef is not None else ():
            rows = None
            for index in _indexes(ctx, tensors, info, fn, fdef, param):
                rows = rows or passed_rows(tensors, info.cls, qual.rpartition(".")[2], params, param)
                if not rows:
                    break
                yield qual, ast.unparse(index), guard_lines.span_of(source, index), rows


def loop_values(ctx, tensors) -> Iterator[Tuple[str, str, str, List[Tuple[str, int, str]]]]:
    """(the function, its parameter, the kind of value, [(file, line, loop variable) of the calls]) for each
    parameter of a method or function of the unit compiled as an entry that calls in other files (through a
    compiled alias, also where a function it is handed to calls it, or through what holds an instance) pass the
    variable of a loop around them binding Python scalars (`range`, `enumerate`'s count, a list of literals)."""
    for qual, info in entry_methods(ctx, functions=True):
        method, params = qual.rpartition(".")[2], [p for p in info.params if p not in ("self", "cls")]
        callers, around = None, {}       # around: id of a call -> the loops around it (one walk per call)
        for param in params:
            callers = callers if callers is not None else \
                (alias_calls(tensors, info.cls, method) or []) + (receiver_calls(tensors, info.cls, method) or []) + \
                (direct_calls(tensors, method) if not info.cls else [])
            found, kinds = [], set()
            for other, fdef, _, calls, cinfo in callers:
                if (not info.cls or method == "forward") and other.ctx.index.path == ctx.index.path:
                    continue        # a function's or module's calls in its own file: the site rules see them
                for call in calls:
                    arg = bound_arguments(call, params).get(param)
                    names = [arg] if isinstance(arg, cst.Name) else _display_names(arg)
                    if not names:
                        continue
                    if id(call) not in around:
                        around[id(call)] = _loops_around(fdef, call)
                    kind = _name_kind(other, around[id(call)], names[0].value) if len(names) == 1 and \
                        isinstance(arg, cst.Name) else "tuple" if all(
                            _name_kind(other, around[id(call)], n.value) in ("int", "float") for n in names) else None
                    if kind:
                        kinds.add(kind)
                        found.append((other.ctx.index.path, _call_line(other, cinfo, call), names[0].value))
            if len(kinds) == 1:
                yield qual, param, kinds.pop(), found


def _display_names(arg: Optional[cst.BaseExpression]) -> List[cst.Name]:
    """The names of a tuple or list display of names (`(h, w)`); none for anything else."""
    if not isinstance(arg, (cst.Tuple, cst.List)) or not arg.elements or \
            not all(isinstance(e.value, cst.Name) for e in arg.elements):
        return []
    return [e.value for e in arg.elements]


def _name_kind(other, loops: List[cst.For], name: str) -> Optional[str]:
    """The kind of what the loops around a call bind to `name` (a loop over a constant of the module too:
    `for (h, w), n in IMAGES`), or of a local the innermost sets once from its variable."""
    from dynlint.rules.recompiles.common import _bound_kind, loop_scalar_kind, module_constant
    loop = _loop_binding(loops, name)
    if loop is None:
        return _set_by_loop(loops, name)
    kind = loop_scalar_kind(loop, name)
    rows = module_constant(other.ctx.source or "", loop.iter.value) if kind is None and \
        isinstance(loop.iter, cst.Name) else []
    return _bound_kind(loop.target, rows[0], name) if len(rows) == 1 else kind


def _call_line(other, info, call: cst.Call) -> int:
    from dynlint.analysis.tensors.foreign import _line_in
    return _line_in(other.ctx.source or "", info, call)


def _loop_binding(loops: List[cst.For], name: str) -> Optional[cst.For]:
    """The innermost of the `for` loops around a call (`_loops_around`) whose target binds `name`."""
    found = [n for n in reversed(loops) if _binds_target(n.target, name)]
    return found[0] if found else None


def _loops_around(fdef: cst.FunctionDef, call: cst.Call) -> List[cst.For]:
    """The `for` loops of `fdef` around `call`, outermost first."""
    stack: List[cst.CSTNode] = []
    found: List[cst.For] = []

    def enter(node: cst.CSTNode) -> bool:
        if node is call:
            found.extend(n for n in stack if isinstance(n, cst.For))
            return False
        stack.append(node)
        return not found

    walk(fdef, enter, lambda node: stack.pop() if stack and stack[-1] is node else None)
    return found


def _set_by_loop(loops: List[cst.For], name: str) -> Optional[str]:
    """The kind of a local that the innermost of the loops around a call (`_loops_around`) binding it sets once from
    a test of its variable (`freq = torch.rand(8) if epoch > 0 else None`): "None or tensor" and the like
    (`scalars._conditional_kind`)."""
    from dynlint.linter.walker import descendants
    from dynlint.rules.recompiles.common import names_in
    from dynlint.rules.recompiles.argument_values import conditional_kind as _conditional_kind
    for loop in reversed(loops):
        binds = [n for n in descendants(loop.body) if isinstance(n, cst.Assign) and
                 any(isinstance(t.target, cst.Name) and t.target.value == name for t in n.targets)]
        if not binds:
            continue
        value = binds[0].value if len(binds) == 1 else None
        if isinstance(value, cst.IfExp) and names_in(value.test) & names_in(loop.target):
            return _conditional_kind(value)
        return None
    return None


def _binds_target(target: cst.BaseExpression, name: str) -> bool:
    if isinstance(target, cst.Name):
        return target.value == name
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_binds_target(e.value, name) for e in target.elements)
    return False


def _indexes(ctx, tensors, info, fn: ast.AST, fdef: cst.FunctionDef, param: str) -> Iterator[ast.Subscript]:
    """The subscripts of tensors by `param` or by a name made from it (`_row_names`), in the method and in the
    methods of its class it hands them to (`self._get_variance(timestep, prev_timestep)`: Dynamo inlines the call,
    and the same 0-d tensor is guarded at each subscript by it)."""
    names = _row_names(fn, [param])
    for name in names:
        index = _tensor_index(tensors, fdef, info.cls, fn, name)
        if index is not None:
            yield index
    for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and
                 isinstance(n.func.value, ast.Name) and n.func.value.id == "self"):
        callee = ctx.index.functions.get(f"{info.cls}.{call.func.attr}")
        if callee is None or callee is info:
            continue
        cparams = [p for p in callee.params if p not in ("self", "cls")]
        handed = [(cparams[i], a.id) for i, a in enumerate(call.args) if i < len(cparams) and isinstance(a, ast.Name)]
        handed += [(k.arg, k.value.id) for k in call.keywords if k.arg in cparams and isinstance(k.value, ast.Name)]
        cfn = guard_lines.function_at(ctx.source or "", callee.def_line)
        cdef = tensors._helper_def(callee)
        if cfn is None or cdef is None:
            continue
        for name in _row_names(cfn, [cparam for cparam, arg in handed if arg in names]):
            index = _tensor_index(tensors, cdef, info.cls, cfn, name)
            if index is not None:
                yield index


def _row_names(fn: ast.AST, seeds: List[str]) -> List[str]:
    """The names holding what the parameters `seeds` are handed, in turn: a seed the function does not rebind,
    and a name (a seed too) it binds once to one of them (`t = timestep`) or to one plus or minus something (`prev
    = t - ratio`; `if prev is None: prev = t - 1`). A seed rebound otherwise is not followed: which value a
    subscript reads is not known without the flow."""
    bound: dict = {}
    for n in ast.walk(fn):
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AugAssign) else []):
            if isinstance(t, ast.Name):
                bound[t.id] = None if t.id in bound or not isinstance(n, ast.Assign) else n.value
    names = [s for s in seeds if s not in bound]
    while True:
        more = sorted(name for name, v in bound.items() if name not in names and (
            isinstance(v, ast.Name) and v.id in names or isinstance(v, ast.BinOp) and
            isinstance(v.op, (ast.Add, ast.Sub)) and isinstance(v.left, ast.Name) and v.left.id in names))
        if not more:
            return names
        names += more


def _tensor_index(tensors, fdef: cst.FunctionDef, cls: str, fn: ast.AST, name: str) -> Optional[ast.Subscript]:
    """The first subscript of a tensor by `name` alone in the function (`self.alphas_cumprod[t]`), as `ast`
    gives it (for its place in the file); None when there is none."""
    found: List[str] = []

    def enter(node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) and node is not fdef:
            return False
        if isinstance(node, cst.Subscript) and len(node.slice) == 1 and \
                isinstance(node.slice[0].slice, cst.Index) and isinstance(node.slice[0].slice.value, cst.Name) and \
                node.slice[0].slice.value.value == name:
            with tensors.within(fdef, cls):
                if tensors.kind(node.value) == TENSOR:
                    found.append(cst.Module([]).code_for_node(node.value))
        return True

    walk(fdef, enter, lambda node: None)
    subscripts = sorted((n for n in ast.walk(fn) if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Name)
                         and n.slice.id == name), key=lambda n: (n.lineno, n.col_offset))
    return next((n for n in subscripts if found and ast.unparse(n.value) in found), None)


def carried_none_elsewhere(ctx, tensors) -> Iterator[Tuple[str, str, List[Tuple[str, int, str]]]]:
    """(the function, its parameter, [(file, line, name) of the calls]) for each parameter of a function of the
    unit compiled where it is defined (or through an alias) that a loop of another file hands the state it
    carries: `state = None` before the loop, `logp, state = encode_chunk(model, chunk, state)` in it. The first
    call gets None, the next a value (DYN505's loop-carried None, across files)."""
    for qual, info in entry_methods(ctx, functions=True):
        if info.cls:
            continue
        method, params = qual.rpartition(".")[2], list(info.params)
        callers = (alias_calls(tensors, "", method) or []) + direct_calls(tensors, method)
        for param in params:
            found = []
            for other, fdef, _, calls, cinfo in callers:
                for call in calls:
                    arg = bound_arguments(call, params).get(param)
                    loops = _loops_around(fdef, call) if isinstance(arg, cst.Name) else []
                    if loops and _none_then_rebound(fdef, loops[-1], arg.value):
                        found.append((other.ctx.index.path, _call_line(other, cinfo, call), arg.value))
            if found:
                yield qual, param, found


def _none_then_rebound(fdef: cst.FunctionDef, loop: cst.For, name: str) -> bool:
    """`name = None` is the last binding of `name` in `fdef` above `loop`, and `loop`'s body binds it again,
    never to None."""
    from dynlint.linter.walker import descendants
    from dynlint.rules.recompiles.common import names_in
    inside = [n for n in descendants(loop.body) if isinstance(n, cst.Assign) and
              any(name in names_in(t.target) for t in n.targets)]
    before, stack = [], [fdef.body]
    while stack:                        # source order: a node, then its children left to right
        n = stack.pop()
        if n is loop:
            break
        if isinstance(n, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name
                                              for t in n.targets):
            before.append(n)
        stack.extend(reversed(list(n.children)))
    none = lambda v: isinstance(v, cst.Name) and v.value == "None"     # noqa: E731
    return bool(before) and none(before[-1].value) and bool(inside) and not any(none(n.value) for n in inside)
