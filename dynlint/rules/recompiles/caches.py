"""A dict that outlives the compiled call and that the compiled code fills (DYN518): a cache handed in by the
caller (`incremental_state`, a per-layer key/value cache) that the traced code tests for a key and then adds
it to. Dynamo guards the dict's keys where the traced code first reads them; the next call finds the key the
last one added and compiles again."""
from __future__ import annotations

import ast
import functools
from typing import Iterator, List, Optional, Tuple

import libcst as cst

from dynlint.analysis import guard_lines
from dynlint.linter.rule import Example, register
from dynlint.rules.common import TorchRule

FILLS = frozenset({"setdefault", "update", "pop", "popitem"})
READS = frozenset({"get", "keys", "items", "values"})
DEPTH = 3                   # calls followed into when the dict is handed on


def _is(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def key_reads(fn: ast.AST, name: str) -> List[ast.AST]:
    """Where `fn` reads the keys of the dict `name`, in source order: `k in name`, `name.get(k)`, `name[k]`,
    `len(name)`, iteration over it."""
    out = []
    for n in ast.walk(fn):
        if isinstance(n, ast.Compare) and any(isinstance(o, (ast.In, ast.NotIn)) for o in n.ops) and \
                any(_is(c, name) for c in n.comparators):
            out.append(n)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in READS and \
                _is(n.func.value, name):
            out.append(n)
        elif isinstance(n, ast.Call) and _is(n.func, "len") and len(n.args) == 1 and _is(n.args[0], name):
            out.append(n)
        elif isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load) and _is(n.value, name):
            out.append(n)
        elif isinstance(n, (ast.For, ast.comprehension)) and _is(n.iter, name):
            out.append(n.iter)
    return sorted(out, key=lambda n: (n.lineno, n.col_offset))


def _own_keys(fn: ast.AST, name: str) -> set:
    """Names a loop over the dict's own keys binds (`for k, v in name.items()`): storing under them keeps the
    key set."""
    out = set()
    for n in ast.walk(fn):
        if isinstance(n, (ast.For, ast.comprehension)):
            it = n.iter.func.value if isinstance(n.iter, ast.Call) and isinstance(n.iter.func, ast.Attribute) and \
                n.iter.func.attr in ("keys", "items") else n.iter
            target = n.target.elts[0] if isinstance(n.target, ast.Tuple) and n.target.elts else n.target
            if _is(it, name) and isinstance(target, ast.Name):
                out.add(target.id)
    return out


ANY = object()              # a key not known here: any key may be the one


def key_of(read: ast.AST) -> object:
    """The key a read of a dict asks for: the constant (`"k" in d`, `d.get("k")`, `d["k"]`), ANY for one
    computed at run time, None for a read of every key (`len(d)`, iteration)."""
    key = read.left if isinstance(read, ast.Compare) else read.args[0] if isinstance(read, ast.Call) and \
        read.args and isinstance(read.func, ast.Attribute) else read.slice if isinstance(read, ast.Subscript) else None
    if key is None:
        return None
    return key.value if isinstance(key, ast.Constant) else ANY


def _same_key(asked: object, changed: List[object]) -> bool:
    """Can a change of the keys `changed` be the one a read of `asked` sees? Two constants must be equal."""
    return asked is None or asked is ANY or any(k is ANY or k == asked for k in changed)


def _changed_keys(n: ast.AST, name: str, own: set) -> Optional[List[object]]:
    """The keys a statement or call changes in the dict `name` (ANY where not known), or None when it changes
    none: `name[k] = v` (alone or in a tuple of targets; not under a key of its own that a loop over it binds),
    `del name[k]`, `name.setdefault(k, ...)`, `.pop(k)`, `.update({...})`."""
    if isinstance(n, (ast.Assign, ast.Delete)):
        keys = [key_of(e) for t in n.targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])
                if isinstance(e, ast.Subscript) and _is(e.value, name) and
                not (isinstance(e.slice, ast.Name) and e.slice.id in own)]
        return keys or None
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in FILLS and \
            _is(n.func.value, name):
        if n.func.attr == "update":
            given = n.args[0] if n.args else None
            return [k.value if isinstance(k, ast.Constant) else ANY for k in given.keys] \
                if isinstance(given, ast.Dict) and None not in given.keys else [ANY]
        return [key_of(n)] if n.args else [ANY]
    return None


def _fills_here(fn: ast.AST, name: str, asked: object = None) -> Optional[ast.AST]:
    """Where `fn` changes the key set of the dict `name` under a key that may be `asked` (see key_of)."""
    own = _own_keys(fn, name)
    for n in ast.walk(fn):
        keys = _changed_keys(n, name, own)
        if keys is not None and _same_key(asked, keys):
            return n
    return None


def _presence(test: ast.expr, read: ast.AST) -> Optional[bool]:
    """What an `if` test says of the key `read` asks for when it is true: present (True), absent (False), or
    None when it says more than that (`state is None or key not in state`)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _presence(test.operand, read)
        return None if inner is None else not inner
    if test is read and isinstance(read, ast.Compare):
        return isinstance(read.ops[0], ast.In)
    if test is read:                                    # `if d.get(k):`
        return True
    if isinstance(test, ast.Compare) and test.left is read and len(test.ops) == 1 and \
            isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
        return isinstance(test.ops[0], ast.IsNot)       # `d.get(k) is not None`
    return None


def _only_when_present(fn: ast.AST, read: ast.AST, fill: ast.AST) -> bool:
    """The change runs only when the key was there already (`if "k" in d: d["k"] = ...`, or after `if not
    d.get("k"): return`): it rewrites a key, the key set stays."""
    if not any(n is fill for n in ast.walk(fn)):
        return False
    for node in (n for n in ast.walk(fn) if isinstance(n, ast.If) and any(r is read for r in ast.walk(n.test))):
        present = _presence(node.test, read)
        inside = any(n is fill for s in node.body for n in ast.walk(s))
        if present is True and inside:
            return True
        exits = node.body and isinstance(node.body[-1], (ast.Return, ast.Raise, ast.Continue))
        if present is False and exits and not inside and fill.lineno > (node.end_lineno or node.lineno):
            return True
    return False


class _File:
    """The file's functions, and how a dict handed to one of them reaches its callees' parameters."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.parents = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
        self.classes = {c.name: c for c in tree.body if isinstance(c, ast.ClassDef)}
        self.defs = {f.lineno: f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}

    def own(self, fn: ast.AST) -> ast.AST:
        """This file's node for a def (another parse of the same source may have made `fn`)."""
        return self.defs.get(fn.lineno, fn)

    def owner(self, node: ast.AST) -> Optional[ast.ClassDef]:
        while node in self.parents:
            node = self.parents[node]
            if isinstance(node, ast.ClassDef):
                return node
        return None

    def methods(self, cls: Optional[ast.ClassDef], name: str) -> Iterator[ast.AST]:
        """The method `name` of `cls` or of a base class defined in this file."""
        seen, todo = set(), [cls] if cls is not None else []
        while todo:
            c = todo.pop(0)
            if c is None or c.name in seen:
                continue
            seen.add(c.name)
            found = next((f for f in c.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                          and f.name == name), None)
            if found is not None:
                yield found
                return
            todo.extend(self.classes.get(guard_lines.dotted(b) or "") for b in c.bases)

    def callee(self, fn: ast.AST, call: ast.Call) -> Optional[Tuple[ast.AST, bool]]:
        """(the def `call` runs, whether it is a method called through `self`) when it is in this file."""
        if isinstance(call.func, ast.Attribute) and _is(call.func.value, "self"):
            found = next(self.methods(self.owner(fn), call.func.attr), None)
            if found is None:       # a mixin the class gets otherwise (a decorator adds the base): the one def
                named = [f for c in self.classes.values() for f in c.body
                         if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name == call.func.attr]
                found = named[0] if len(named) == 1 else None
            return (found, True) if found is not None else None
        if isinstance(call.func, ast.Name):
            found = guard_lines.top_function(self.tree, call.func.id)
            return (found, False) if found is not None else None
        return None

    def handed(self, fn: ast.AST, name: str) -> Iterator[Tuple[ast.AST, str]]:
        """(callee, its parameter) for each call in `fn` that hands on `name` or an item of it (`cache[i]`)."""
        for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
            found = self.callee(fn, call)
            if found is None or found[0] is fn:
                continue
            target, method = found
            params = [a.arg for a in target.args.posonlyargs + target.args.args][1 if method else 0:]
            for i, arg in enumerate(call.args):
                if _carries(arg, name) and i < len(params):
                    yield target, params[i]
            for kw in call.keywords:
                if kw.arg in params and _carries(kw.value, name):
                    yield target, kw.arg

    def fills(self, fn: ast.AST, name: str, asked: object = None, depth: int = 0) -> Optional[ast.AST]:
        """Where `fn`, or a function of this file it hands the dict to, changes the keys of the dict `name`
        under a key that may be `asked`."""
        here = _fills_here(fn, name, asked)
        if here is not None or depth >= DEPTH:
            return here
        return next((f for callee, param in self.handed(fn, name)
                     for f in [self.fills(callee, param, asked, depth + 1)] if f is not None), None)

    def callers(self, fn: ast.AST) -> Iterator[Tuple[ast.AST, ast.Call]]:
        """(calling def, call) for each call of `fn` in a function of this file."""
        for caller in (n for n in ast.walk(self.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            for call in (n for n in ast.walk(caller) if isinstance(n, ast.Call)):
                found = self.callee(caller, call)
                if found is not None and found[0] is fn:
                    yield caller, call


def _carries(arg: ast.expr, name: str) -> bool:
    return _is(arg, name) or isinstance(arg, ast.Subscript) and _is(arg.value, name)


def _passed(fn: ast.AST, call: ast.Call, param: str) -> Optional[ast.expr]:
    """The expression `call` binds to `param` of `fn`."""
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    if isinstance(call.func, ast.Attribute) and params[:1] == ["self"]:
        params = params[1:]
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            return None
        if i < len(params) and params[i] == param:
            return arg
    return next((kw.value for kw in call.keywords if kw.arg == param), None)


@register
class CacheFilledByCompiledCode(TorchRule):
    """Checks for a dict that the caller hands to compiled code and keeps for the next call, and that the
    traced code tests for a key and then fills (`if "k" in cache: ...` then `cache["k"] = k`): an incremental
    decoding state, a per-layer key/value cache, a memo of masks."""
    code = "DYN518"
    name = "cache-filled-by-compiled-code"
    message = ("`{name}` is a dict the caller keeps between calls, and the compiled code changes its keys (line "
               "{line}): Dynamo guards them here, where they are first read, so the next call, which finds the "
               "new key set, compiles again")
    fix = ("Fill the dict's keys before the first compiled call (the same key set every call), or keep the cached "
           "tensors in a preallocated buffer or an object whose attributes are always set")
    recompiles = True
    severity = "note"
    why = """
        Dynamo guards a dict argument on its keys where the traced code first reads them: `"k" in cache`,
        `cache.get("k")`, `len(cache)`, iteration (`___dict_contains('k', cache)` in its recompile log). A
        cache the compiled code fills (`cache["k"] = k`) and the caller hands in again on the next call (an
        incremental decoding state kept across steps) has a key there that it lacked: the guard fails and the
        function compiles again, once per new key set. A dict made afresh for each call keeps its key set
        and does not recompile; neither does one the traced code itself makes (docs/guards.md).
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def attend(x, cache):
            if "k" in cache:
                x = torch.cat([cache["k"], x])
            cache["k"] = x
            return x.sum(0)

        def decode(x, steps):
            cache = {}
            for _ in range(steps):
                x = x + attend(x, cache)
            return x
    """, "decode(torch.ones(2, 3), 3)")]
    VALID = [Example("""
        import torch

        @torch.compile
        def attend(x, cache):
            if "k" in cache:
                x = torch.cat([cache["k"], x])
            cache["k"] = x
            return x.sum(0)

        def decode(x, steps):
            for _ in range(steps):
                cache = {"k": x}                 # made afresh, with the same keys, for each call
                x = x + attend(x, cache)
            return x
    """, "decode(torch.ones(2, 3), 3)")]

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, (cst.In, cst.NotIn)) and \
                isinstance(node.comparisons[0].comparator, cst.Name):
            self._check(node, node.comparisons[0].comparator.value)

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if isinstance(f, cst.Attribute) and f.attr.value == "get" and isinstance(f.value, cst.Name):
            self._check(node, f.value.value)

    def _check(self, node: cst.CSTNode, name: str) -> None:
        if not self.ctx.in_region or not isinstance(self.ctx.function, cst.FunctionDef):
            return
        params = self.ctx.function.params
        if name == "self" or name not in {p.name.value for p in params.params + params.posonly_params}:
            return
        ix, source = self.ctx.index, self.ctx.source or ""
        info = ix.functions.get(self.ctx.qualname) if ix is not None else None
        fn = guard_lines.function_at(source, info.def_line) if info is not None else None
        tree = guard_lines.parsed(source)
        if fn is None or tree is None or _rebound(fn, name):
            return
        file = _file(source)
        fn = file.own(fn)
        line = self.ctx.position(node)[0]
        reads = key_reads(fn, name)
        if not reads or reads[0].lineno != line:
            return                      # Dynamo guards the keys at the first read
        asked = key_of(reads[0])
        fill = file.fills(fn, name, asked) or self._filled_by_caller(file, fn, name, asked)
        if fill is None or made_per_call(self.ctx, fn, name) or _only_when_present(fn, reads[0], fill):
            return
        self.report(node, name=name, line=fill.lineno,
                    related=[(fill.lineno, fill.col_offset, f"the keys of `{name}` change here")])

    def report(self, node, message=None, related=(), **fmt) -> None:
        if self.in_untraced_function() or self.dead_under_dynamo(node):
            return
        self.ctx.report(self, node, message or self.format_message(**fmt), related=related)

    def _filled_by_caller(self, file: _File, fn: ast.AST, name: str, asked: object,
                          depth: int = 0) -> Optional[ast.AST]:
        """A caller of this file hands its own parameter to `name` and fills it through another of its callees
        (`get_state(state, key)` tests it, `set_state(state, key, v)` fills it), or its caller does, and so on
        (`DEPTH` callers up)."""
        for caller, call in file.callers(fn) if depth < DEPTH else ():
            arg = _passed(fn, call, name)
            if isinstance(arg, ast.Name) and arg.id in {a.arg for a in caller.args.args}:
                found = file.fills(caller, arg.id, asked) or \
                    self._filled_by_caller(file, caller, arg.id, asked, depth + 1)
                if found is not None:
                    return found
        return None


def made_per_call(ctx, fn: ast.AST, name: str, depth: int = 0) -> bool:
    """Some call of the def `fn` in this file hands its parameter `name` a value made for that call: a display
    or a construction (`{}`, `Cache()`), or a local bound in the loop around the call (or by a traced caller,
    whose every call makes it again). Followed up through callers that hand on their own parameter. A dict or
    an object made afresh keeps what the compiled code guarded on it from one call to the next."""
    tree = guard_lines.parsed(ctx.source or "")
    file = _file(ctx.source or "") if tree is not None else None
    fn = file.own(fn) if file is not None else fn
    for caller, call in (list(file.callers(fn)) + _compiled_calls(file, fn)) if file is not None else ():
        arg = _passed(fn, call, name)
        if isinstance(arg, ast.Subscript):
            arg = arg.value
        if isinstance(arg, (ast.Dict, ast.DictComp, ast.Call)):
            return True
        if not isinstance(arg, ast.Name):
            continue
        if arg.id in {a.arg for a in caller.args.args}:
            if depth < DEPTH and made_per_call(ctx, caller, arg.id, depth + 1):
                return True
            continue
        if _bound_per_call(ctx, file, caller, call, arg.id):
            return True
    return False


def _rebound(fn: ast.AST, name: str) -> bool:
    """`fn` (a def, or a loop) binds `name` itself (`cache = {}`): not the caller's value."""
    return any(isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and any(
        _is(t, name) for t in (n.targets if isinstance(n, ast.Assign) else [n.target])) for n in ast.walk(fn))


def _compiled_calls(file: _File, fn: ast.AST) -> List[Tuple[ast.AST, ast.Call]]:
    """Calls of a name this file compiles `fn` into (`step = torch.compile(attend)` ... `step(x, cache)`)."""
    names = {t.id for n in ast.walk(file.tree) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
             and (guard_lines.dotted(n.value.func) or "").endswith("compile") and n.value.args and
             _is(n.value.args[0], fn.name) for t in n.targets if isinstance(t, ast.Name)}
    out = []
    for caller in (n for n in ast.walk(file.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        out.extend((caller, c) for c in ast.walk(caller) if isinstance(c, ast.Call) and
                   isinstance(c.func, ast.Name) and c.func.id in names)
    return out


def _bound_per_call(ctx, file: _File, caller: ast.AST, call: ast.Call, name: str) -> bool:
    """`name` is bound by the caller when that is traced code (each compiled call makes it again), or inside
    the innermost loop around `call`."""
    node, loop = call, None
    while node in file.parents and node is not caller:
        node = file.parents[node]
        if isinstance(node, (ast.For, ast.While)) and loop is None:
            loop = node
    ix = ctx.index
    traced = any(q in ctx.regions for q, f in (ix.functions.items() if ix is not None else ())
                 if f.def_line == caller.lineno)
    if traced:                      # made by the traced code: a new value on every compiled call
        return _rebound(caller, name)
    return loop is not None and _rebound(loop, name)


@functools.lru_cache(maxsize=4)
def _file(source: str) -> _File:
    """The file's functions and its parent map, made once per file (every unit of the file asks)."""
    return _File(guard_lines.parsed(source))


def handed_item(ctx, node: cst.AugAssign) -> Optional[str]:
    """The parameter for `meta["steps"] += 1` / `state[0] += 1` in traced code, where every call of the function
    that this file shows (direct, or through a name it is compiled into) passes that parameter a local bound to a
    dict or list display before the call, outside the loop around it: one container the caller keeps and hands
    in again. Dynamo guards the item where the traced code reads it (`meta['steps'] == 0`) and the next call
    finds the new number (measured, torch 2.13: once, then the int is dynamic). None otherwise."""
    target, fn = node.target, ctx.function
    if not (isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and len(target.slice) == 1 and
            isinstance(target.slice[0].slice, cst.Index) and
            isinstance(target.slice[0].slice.value, (cst.SimpleString, cst.Integer)) and
            isinstance(node.value, (cst.Integer, cst.Float)) and isinstance(fn, cst.FunctionDef)):
        return None
    name, ix, tree = target.value.value, ctx.index, guard_lines.parsed(ctx.source or "")
    here = ix.functions.get(ctx.qualname) if ix is not None else None
    fdef = guard_lines.function_at(ctx.source or "", here.def_line) if here is not None else None
    if fdef is None or name not in here.params or name == "self":
        return None
    file = _file(ctx.source or "")
    fdef = file.own(fdef)
    calls = list(file.callers(fdef)) + _compiled_calls(file, fdef)
    if not calls or made_per_call(ctx, fdef, name):
        return None
    for _, call in calls:
        arg = _passed(fdef, call, name)
        if not (isinstance(arg, ast.Name) and
                isinstance(guard_lines.last_binding(tree, arg.id, call.lineno), (ast.Dict, ast.List))):
            return None
    return name
