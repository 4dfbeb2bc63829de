"""Where Dynamo installs a guard: the line its recompile log names, and so where a recompile finding stands.

Dynamo wraps every input of a frame (an argument, a global, an attribute of `self` or of a global object) in a
lazy variable and installs the guard on it at the first instruction that needs its value: `if skip:` for a
bool, `return x + offset` for an int, `opts.get("clip")` for a dict, `for p in past` for a list. Binding the
value to another name (`top, left = box`; `m = mask`) does not need it, and handing it to a function that
Dynamo inlines defers the guard to the callee's first use. Guards on a tensor's metadata (dtype, rank, sizes,
`requires_grad`) and on global state (grad mode, autocast) carry no source line: the log names the
recompiled frame, whose first line is its first decorator's or its `def`'s (`co_firstlineno`).

Measured on torch 2.13 (tests/test_guard_lines.py compiles each case and compares the logged guard line).
Plain syntax: nothing here imports torch.
"""
from __future__ import annotations

import ast
import functools
from typing import Iterator, List, Optional, Sequence, Set, Tuple

Span = Tuple[int, int, int, int]      # line, column, end line, end column: 1-based lines, 0-based columns

MAX_DEPTH = 3                         # callees followed into when the value is handed on


@functools.lru_cache(maxsize=8)
def _tree(source: str) -> Optional[ast.Module]:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def parsed(source: str) -> Optional[ast.Module]:
    """The file's syntax tree (cached for the file being checked); None when it does not parse."""
    return _tree(source)


def _functions(tree: ast.Module) -> Iterator[ast.AST]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def function_at(source: str, def_line: int) -> Optional[ast.AST]:
    """The def whose `def` keyword stands at line `def_line` of `source`."""
    return _defs_by_line(source).get(def_line)


def innermost_function(source: str, line: int) -> Optional[ast.AST]:
    """The innermost def holding line `line` of `source` (its `def` line included)."""
    inside = [f for f in _defs_by_line(source).values() if f.lineno <= line <= (f.end_lineno or f.lineno)]
    return max(inside, key=lambda f: f.lineno) if inside else None


@functools.lru_cache(maxsize=8)
def _defs_by_line(source: str) -> dict:
    tree = _tree(source)
    out: dict = {}
    for f in _functions(tree) if tree else ():
        out.setdefault(f.lineno, f)
    return out


def top_function(tree: Optional[ast.Module], name: str) -> Optional[ast.AST]:
    """The function `name` defined at the top level of the file."""
    if tree is None:
        return None
    return next((s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name),
                None)


def column(lines: Sequence[str], line: int, offset: int) -> int:
    """ast's columns count UTF-8 bytes; findings count characters."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return len(text.encode("utf-8")[:offset].decode("utf-8", "replace"))


def span_of(source: str, node: ast.AST) -> Span:
    lines = source.splitlines()
    end_line = getattr(node, "end_lineno", None) or node.lineno
    return (node.lineno, column(lines, node.lineno, node.col_offset),
            end_line, column(lines, end_line, getattr(node, "end_col_offset", None) or node.col_offset))


def entry_span(source: str, fn: ast.AST) -> Span:
    """From the function's first decorator (Dynamo's `co_firstlineno`) to the end of its `def` line: where a
    guard with no source line (a tensor's dtype or rank, grad mode) is reported."""
    lines = source.splitlines()
    first = fn.decorator_list[0].lineno if fn.decorator_list else fn.lineno
    start_col = fn.decorator_list[0].col_offset - 1 if fn.decorator_list else fn.col_offset
    def_text = lines[fn.lineno - 1] if fn.lineno <= len(lines) else ""
    return first, max(0, column(lines, first, start_col)), fn.lineno, len(def_text.rstrip())


def _parameters(fn: ast.AST) -> List[str]:
    a = fn.args
    return [p.arg for p in list(a.posonlyargs) + list(a.args)]


def dotted(node: ast.AST) -> Optional[str]:
    """`a.b.c` for a name or an attribute chain of names; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None


def _statements(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements in the order a trace meets them (a compound statement before the statements it holds);
    nested defs and classes are not entered (their bodies run later, if at all)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        for field in ("body", "orelse", "handlers", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                yield from _statements([s for s in inner if isinstance(s, ast.stmt)] +
                                       [s for h in inner if isinstance(h, ast.ExceptHandler) for s in h.body])


def _own_expressions(stmt: ast.stmt) -> Iterator[ast.AST]:
    """The expressions a statement evaluates itself (a compound statement's header, not its body)."""
    if isinstance(stmt, (ast.If, ast.While)):
        yield stmt.test
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        yield stmt.iter
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        yield from (i.context_expr for i in stmt.items)
    elif isinstance(stmt, (ast.Try, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return
    else:
        yield stmt


def _reads(node: ast.AST, names: Set[str]) -> Iterator[ast.AST]:
    """Loads of `names` (plain or dotted) inside `node`, in source order."""
    found, unread = [], {id(a) for n in ast.walk(node) if isinstance(n, ast.Call) and len(n.args) == 1 and
                         (dotted(n.func) or "").rpartition(".")[2] == "is_tensor" for a in n.args}
    for n in ast.walk(node):
        # `torch.is_tensor(t)` answers from what kind of value `t` is, without installing a guard on its value
        if isinstance(n, (ast.Name, ast.Attribute)) and isinstance(getattr(n, "ctx", None), ast.Load) \
                and dotted(n) in names and id(n) not in unread:
            found.append(n)
    found.sort(key=lambda n: (n.lineno, n.col_offset))
    # a dotted read `self.step` also holds its prefix `self`: keep the outermost match only
    return iter([n for n in found if not any(o is not n and _inside(n, o) for o in found)])


def _inside(inner: ast.AST, outer: ast.AST) -> bool:
    return any(n is inner for n in ast.walk(outer))


def _bound_to_alias(stmt: ast.stmt, names: Set[str]) -> Optional[Set[str]]:
    """`a = name` or `a, b = name`: the names that now hold the value (its items), without Dynamo needing it."""
    if not (isinstance(stmt, ast.Assign) and dotted(stmt.value) in names):
        return None
    out = set()
    for t in stmt.targets:
        for n in ast.walk(t):
            if isinstance(n, ast.Name):
                out.add(n.id)
    return out


def guard_read(source: str, fn: ast.AST, name: str, depth: int = 0, after: int = 0) -> Optional[Span]:
    """The span of the read of `name` (a parameter, a global, `self.attr`, `config.attr`) at which Dynamo
    installs its guard when it traces `fn`: the first read in trace order that needs the value. A value handed
    to a function of the same file (or a method of the class, through `self`) is followed into it, and so is a
    method of the class that reads `self.<attr>` first. None when `fn` never reads it. `after`: only reads in
    statements that start below that line (the code Dynamo resumes after a break there)."""
    tree = _tree(source)
    names = {name}
    for stmt in _statements(fn.body):
        if _saved_on_ctx(fn, stmt, names) and stmt.lineno > after:
            return span_of(source, stmt.value)      # a constant of the backward graph: guarded where it is saved
        alias = _bound_to_alias(stmt, names)
        if alias is not None:
            names |= alias
            continue
        if stmt.lineno <= after:
            continue
        if isinstance(stmt, ast.AugAssign) and dotted(stmt.target) in names:
            return span_of(source, stmt.target)         # `self.step += 1` reads it first
        for expr in _own_expressions(stmt):
            read = next(_reads(expr, names), None)
            if read is None:
                inner = _in_own_methods(source, tree, fn, expr, name, depth) if name.startswith("self.") else None
                if inner is not None:
                    return inner
                continue
            deeper = _handed_on(source, tree, expr, read, depth)
            return deeper or span_of(source, read)
    return None


def index_read(source: str, fn: ast.AST, name: str, after: int = 0) -> Optional[Span]:
    """The span of the first subscript by `name` alone (`self.alphas_cumprod[t]`) in the statements of `fn` that
    start below `after`: where Dynamo turns a 0-d tensor index into a Python int and guards its value (a read
    of it elsewhere, `t * 0.5`, is no guard; measured, torch 2.13)."""
    for stmt in _statements(fn.body):
        if stmt.lineno <= after:
            continue
        for expr in _own_expressions(stmt):
            found = sorted((n for n in ast.walk(expr) if isinstance(n, ast.Subscript) and
                            isinstance(n.slice, ast.Name) and n.slice.id == name),
                           key=lambda n: (n.lineno, n.col_offset))
            if found:
                return span_of(source, found[0])
    return None


def _in_own_methods(source: str, tree: Optional[ast.Module], fn: ast.AST, expr: ast.AST, name: str,
                    depth: int) -> Optional[Span]:
    """`x = self.forward_features(x)` where that method of the class reads `self.<attr>` first: Dynamo traces
    the method inline, so its read is the first one (followed `MAX_DEPTH` calls deep)."""
    if tree is None or depth >= MAX_DEPTH:
        return None
    for call in ast.walk(expr):
        method = _own_method(tree, fn, call.func) if isinstance(call, ast.Call) else None
        found = guard_read(source, method, name, depth + 1) if method is not None and method is not fn else None
        if found is not None:
            return found
    return None


def _handed_on(source: str, tree: Optional[ast.Module], expr: ast.AST, read: ast.AST, depth: int) -> Optional[Span]:
    """When the read is an argument of a call of a top-level function of the file, or of a method of its own
    class (`self.get_decay(step)`), where that function first needs it."""
    if tree is None or depth >= MAX_DEPTH:
        return None
    for call in ast.walk(expr):
        if not isinstance(call, ast.Call):
            continue
        callee = top_function(tree, call.func.id) if isinstance(call.func, ast.Name) else \
            _own_method(tree, read, call.func) or _applied_forward(tree, call.func)
        if callee is None:
            continue
        params = _parameters(callee)[0 if isinstance(call.func, ast.Name) else 1:]     # (`self`, or `ctx`)
        for i, a in enumerate(call.args):
            if a is read and i < len(params):
                return guard_read(source, callee, params[i], depth + 1)
        for k in call.keywords:
            if k.value is read and k.arg in params:
                return guard_read(source, callee, k.arg, depth + 1)
    return None


def _saved_on_ctx(fn: ast.AST, stmt: ast.stmt, names: Set[str]) -> bool:
    """`ctx.alpha = alpha` in an autograd Function's `forward(ctx, ...)`: Dynamo guards the value saved there
    (`alpha == 0.0`; measured, torch 2.13), where a plain alias (`a = alpha`) needs no guard."""
    params = _parameters(fn)
    return getattr(fn, "name", "") == "forward" and params[:1] == ["ctx"] and isinstance(stmt, ast.Assign) and \
        len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Attribute) and \
        dotted(stmt.targets[0].value) == "ctx" and dotted(stmt.value) in names


def _applied_forward(tree: ast.Module, func: ast.AST) -> Optional[ast.AST]:
    """`GradReverse.apply(x, alpha)` of a class of the file (a `torch.autograd.Function`): its `forward(ctx, x,
    alpha)`, which Dynamo traces with the arguments `apply` was given."""
    if not (isinstance(func, ast.Attribute) and func.attr == "apply" and isinstance(func.value, ast.Name)):
        return None
    cls = next((c for c in tree.body if isinstance(c, ast.ClassDef) and c.name == func.value.id), None)
    return next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "forward"), None) \
        if cls is not None else None


def _own_method(tree: ast.Module, read: ast.AST, func: ast.AST) -> Optional[ast.AST]:
    """`self.get_decay(step)` in a method of a class of the file (`read`: a node inside that method): that
    class's own method `get_decay`."""
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"):
        return None
    for cls in ast.walk(tree):
        if isinstance(cls, ast.ClassDef) and cls.lineno <= read.lineno <= (cls.end_lineno or cls.lineno):
            methods = [f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
            if any(f.lineno <= read.lineno <= (f.end_lineno or f.lineno) for f in methods):
                return next((f for f in methods if f.name == func.attr), None)
    return None


def key_read(source: str, fn: ast.AST, name: str, key: object) -> Optional[Span]:
    """Where Dynamo guards a dict on one key: the first place `fn` looks the key up in `name` (`key in name`,
    `name.get(key)`, `name[key]`): a key that was missing when it compiled is guarded there as missing. None
    when `fn` never looks it up."""
    def mentions(node: ast.AST) -> bool:
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            return _constant(node.left) == key and any(dotted(c) == name for c in node.comparators)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            return dotted(node.func.value) == name and bool(node.args) and _constant(node.args[0]) == key
        if isinstance(node, ast.Subscript):
            return dotted(node.value) == name and _constant(node.slice) == key
        return False
    for stmt in _statements(fn.body):
        for expr in _own_expressions(stmt):
            hits = sorted((n for n in ast.walk(expr) if mentions(n)), key=lambda n: (n.lineno, n.col_offset))
            if hits:
                return span_of(source, hits[0])
    return None


def key_lookup(fn: ast.AST, name: str, node: ast.AST) -> bool:
    """Is `node` a lookup of one constant key in `name` (`name[k]`, `name.get(k)`, `k in name`)?"""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
        return isinstance(node.left, ast.Constant) and dotted(node.comparators[0]) == name
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return dotted(node.func.value) == name and bool(node.args) and isinstance(node.args[0], ast.Constant)
    return isinstance(node, ast.Subscript) and dotted(node.value) == name and isinstance(node.slice, ast.Constant)


def reads_whole(fn: ast.AST, name: str) -> bool:
    """Does `fn` read the dict `name` other than one constant key at a time (iterates it, takes its length, its
    keys or items, unpacks it, hands it on)? Dynamo guards its key set then; a key looked up by name is guarded
    alone (measured on torch 2.13: a key the code never looks up can be added between calls)."""
    looked = {id(n) for node in ast.walk(fn) if key_lookup(fn, name, node)
              for n in ([node.func.value] if isinstance(node, ast.Call) else
                        [node.value] if isinstance(node, ast.Subscript) else node.comparators)}
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and id(n) not in looked
               for n in ast.walk(fn))


def item_use(source: str, fn: ast.AST, name: str, key: object) -> Optional[Span]:
    """Where Dynamo guards the value of the item `key` of the dict `name` (a value changed between calls): where
    the code first uses it, the local it binds it to followed (`clip = opts.get("clip")` guards nothing;
    `if clip is not None:` does). None when `fn` never looks the key up."""
    for stmt in _statements(fn.body):
        for expr in _own_expressions(stmt):
            hits = sorted((n for n in ast.walk(expr) if key_lookup(fn, name, n) and not isinstance(n, ast.Compare)
                           and _constant(n.args[0] if isinstance(n, ast.Call) else n.slice) == key),
                          key=lambda n: (n.lineno, n.col_offset))
            if not hits:
                continue
            if isinstance(stmt, ast.Assign) and stmt.value is hits[0] and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], ast.Name):
                return guard_read(source, fn, stmt.targets[0].id, after=stmt.end_lineno or stmt.lineno)
            return span_of(source, hits[0])
    return None


def _constant(node: ast.AST) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def enclosing(tree: ast.Module, line: int) -> ast.AST:
    """The innermost function holding `line` (the module when none does)."""
    best = tree
    for f in ast.walk(tree):
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.lineno <= line <= (f.end_lineno or 0) and \
                (best is tree or f.lineno >= best.lineno):
            best = f
    return best


def last_binding(tree: ast.Module, name: str, line: int) -> Optional[ast.AST]:
    """The value of the last plain assignment `name = ...` before `line` in the innermost function holding
    `line` (or at module level): what a name passed at `line` holds, when it is that simple."""
    best, value = None, None
    for n in ast.walk(enclosing(tree, line)):
        if not isinstance(n, ast.Assign) or n.lineno >= line or best is not None and n.lineno <= best.lineno:
            continue
        for t in n.targets:
            if isinstance(t, ast.Name) and t.id == name:
                best, value = n, n.value
            elif isinstance(t, ast.Tuple) and isinstance(n.value, ast.Tuple) and len(t.elts) == len(n.value.elts) \
                    and not any(isinstance(e, ast.Starred) for e in t.elts + n.value.elts):
                # a parallel assignment (`g, d = torch.compile(g), torch.compile(d)`)
                for e, v in zip(t.elts, n.value.elts):
                    if isinstance(e, ast.Name) and e.id == name:
                        best, value = n, v
    return value


def element_use(source: str, fn: ast.AST, name: str) -> Optional[Span]:
    """Where Dynamo guards the numbers a list or tuple argument holds (`image_sizes[0][0] == 4`) when the
    function first reads it by iterating it (`for img, (h, w) in zip(images, image_sizes):`, `for s in sizes:`):
    unpacking guards nothing, the first use of a name bound from an element does (measured, torch 2.13). None
    when the first read is no such loop (`guard_read` says where), or the loop never uses the elements."""
    for stmt in _statements(fn.body):
        read = next((e for e in _own_expressions(stmt) if next(_reads(e, {name}), None) is not None), None)
        if read is None:
            continue
        if not isinstance(stmt, ast.For):
            return None
        it, target = stmt.iter, stmt.target
        if isinstance(it, ast.Call) and dotted(it.func) in ("zip", "enumerate") and not it.keywords:
            pos = next((i for i, a in enumerate(it.args) if isinstance(a, ast.Name) and a.id == name), None)
            if pos is None or not isinstance(target, ast.Tuple):
                return None
            target = target.elts[pos + (dotted(it.func) == "enumerate")] if \
                pos + (dotted(it.func) == "enumerate") < len(target.elts) else None
        elif not (isinstance(it, ast.Name) and it.id == name):
            return None
        bound = {n.id for n in ast.walk(target) if isinstance(n, ast.Name)} if target is not None else set()
        for inner in _statements(stmt.body):
            use = next((u for e in _own_expressions(inner) for u in _reads(e, bound)), None)
            if use is not None:
                return span_of(source, use)
        return None
    return None
