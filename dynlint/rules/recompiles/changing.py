"""Python values that change from one call of compiled code to the next although no loop variable names them: a
number an object keeps, changed by the loop around the calls (directly or by a method of its class), and a
number drawn afresh from a random generator at each iteration.

Dynamo guards a Python number or bool argument on its value at its first read; each of these hands it a new one
at the next call.
"""
from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

import libcst as cst

from dynlint.analysis import guard_lines
from dynlint.linter.index import dotted_name
from dynlint.linter.walker import descendants, dotted
from dynlint.rules.common import source_of


def object_state(ctx, value: cst.BaseExpression) -> Optional[Tuple[str, str]]:
    """(`obj.attr`, "int" | "float" | "bool") for a number read from an attribute of an object the function
    built (`scaler = LossScaler()`) that a loop around the call changes: by assigning it (`scaler.scale = s`),
    or by calling a method of the object's class that assigns `self.<attr>` (`scaler.update(found_inf)` with
    `self.scale *= 2.0`; `stopper(loss)`, whose `__call__` sets `self.best = loss`). Each iteration hands the
    compiled call the value the last one left. Read through a getter too (`sched.get_last_lr()[0]`, whose
    method returns `[self.lr]`)."""
    if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Call):
        value = value.value             # `sched.get_last_lr()[0]`: an item of what the getter returns
    getter = value.func if isinstance(value, cst.Call) and not value.args else None
    if getter is not None:
        value = getter
    if not (isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name)) or \
            value.value.value == "self" or ctx.index is None:
        return None
    obj, attr = value.value.value, value.attr.value
    ix = ctx.index
    classes = [c for c in ix.built(obj, ix.functions.get(ctx.qualname or "")) if c in ix.classes]
    cls = class_def(ctx.source or "", ix.classes[classes[0]]) if len(classes) == 1 else None
    if cls is not None and getter is not None:
        attr = _returned_attribute(cls, attr)
    if cls is None or attr is None:
        return None
    setters = _setters(cls, attr)
    for loop in (b for b in reversed(ctx.blocks) if isinstance(b, (cst.For, cst.While))):
        for n in descendants(loop.body):
            if isinstance(n, (cst.Assign, cst.AugAssign)) and \
                    any(dotted(t) == f"{obj}.{attr}" for t in _targets(n)) or \
                    isinstance(n, cst.Call) and _method(n.func, obj) in setters:
                kind = _attribute_kind(cls, attr)
                return (f"{obj}.{attr}", kind) if kind else None
    return None


def helper_of_state(ctx, value: cst.BaseExpression) -> Optional[Tuple[str, str]]:
    """(`obj.attr`, its kind) for a call of a function of the file whose one `return` computes a number from an
    attribute of an argument (`time_remaining(env)` returning `env.spec.max_steps - env.elapsed_steps`) that
    `object_state` finds the loop changing (`env.step(a)` advances `self.elapsed_steps`): a new number each
    call. The kind is a float where the return divides or has a float literal."""
    from dynlint.rules.recompiles.argument_values import float_number
    ix = ctx.index
    info = ix.functions.get(value.func.value) if ix is not None and isinstance(value, cst.Call) and \
        isinstance(value.func, cst.Name) else None
    fn = guard_lines.function_at(ctx.source or "", info.def_line) if info is not None and not info.cls else None
    returns = [n.value for n in ast.walk(fn) if isinstance(n, ast.Return) and n.value is not None] if fn else []
    if len(returns) != 1 or any(a.star or a.keyword for a in value.args):
        return None
    handed = {p: a.value for p, a in zip(info.params, value.args) if isinstance(a.value, cst.Name)}
    for n in ast.walk(returns[0]):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in handed:
            found = object_state(ctx, cst.Attribute(value=handed[n.value.id], attr=cst.Name(n.attr)))
            if found is not None:
                return found[0], "float" if float_number(returns[0]) else found[1]
    return None


def _returned_attribute(cls: ast.ClassDef, method: str) -> Optional[str]:
    """The attribute a getter of the class returns (`return self.lr`, `return [self.lr]`), else None."""
    fn = _methods(cls).get(method)
    returns = [n.value for n in ast.walk(fn) if isinstance(n, ast.Return)] if fn is not None else []
    attrs = set()
    for r in returns:
        r = r.elts[0] if isinstance(r, (ast.List, ast.Tuple)) and len(r.elts) == 1 else r
        if not (isinstance(r, ast.Attribute) and isinstance(r.value, ast.Name) and r.value.id == "self"):
            return None
        attrs.add(r.attr)
    return attrs.pop() if len(attrs) == 1 else None


def _targets(n) -> List[cst.BaseExpression]:
    return [t.target for t in n.targets] if isinstance(n, cst.Assign) else [n.target]


def _method(func: cst.BaseExpression, obj: str) -> Optional[str]:
    """The method a call of `func` runs on `obj`: `obj.m(...)` runs m, `obj(...)` runs `__call__`."""
    if isinstance(func, cst.Name) and func.value == obj:
        return "__call__"
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == obj:
        return func.attr.value
    return None


def class_def(source: str, info) -> Optional[ast.ClassDef]:
    tree = guard_lines.parsed(source)
    return next((n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == info.name and
                 n.lineno <= info.start <= (n.end_lineno or n.lineno)), None) if tree is not None else None


def _methods(cls: ast.ClassDef) -> Dict[str, ast.FunctionDef]:
    return {m.name: m for m in cls.body if isinstance(m, ast.FunctionDef)}


def _assigned(fn: ast.FunctionDef, attr: str) -> List[ast.AST]:
    """The statements of `fn` that bind `self.<attr>`."""
    return [n for n in ast.walk(fn) if isinstance(n, (ast.Assign, ast.AugAssign)) and
            any(isinstance(t, ast.Attribute) and t.attr == attr and isinstance(t.value, ast.Name) and
                t.value.id == "self" for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))]


def _setters(cls: ast.ClassDef, attr: str) -> List[str]:
    """The methods of the class, `__init__` aside, that assign `self.<attr>`."""
    return [name for name, fn in _methods(cls).items() if name != "__init__" and _assigned(fn, attr)]


def _attribute_kind(cls: ast.ClassDef, attr: str) -> Optional[str]:
    """The kind of Python number the class keeps in `self.<attr>`, from what its methods assign: a literal, a
    `float(...)`/`int(...)`, arithmetic (a true division or a float literal makes a float), or an `__init__`
    parameter's default; None when nothing says it is a number."""
    kinds = set()
    for fn in _methods(cls).values():
        defaults = _defaults(fn)
        for n in _assigned(fn, attr):
            value = defaults.get(n.value.id) if isinstance(n.value, ast.Name) else n.value
            if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Div):
                kinds.add("float")
            kind = _number_kind(value) if value is not None else None
            if kind:
                kinds.add(kind)
    if "float" in kinds:
        return "float"
    return kinds.pop() if len(kinds) == 1 else None


def _defaults(fn: ast.FunctionDef) -> Dict[str, ast.expr]:
    args = fn.args.args
    return {a.arg: d for a, d in zip(args[len(args) - len(fn.args.defaults):], fn.args.defaults)}


def _number_kind(e: ast.expr) -> Optional[str]:
    if isinstance(e, ast.UnaryOp):
        return _number_kind(e.operand)
    if isinstance(e, ast.Constant):
        return {bool: "bool", int: "int", float: "float"}.get(type(e.value))
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in ("float", "int"):
        return e.func.id
    if isinstance(e, ast.BinOp):
        sides = {_number_kind(e.left), _number_kind(e.right)}
        if isinstance(e.op, ast.Div) or "float" in sides:
            return "float"
        return "int" if sides == {"int"} else None
    return None


# Python's and NumPy's draws of one number (NumPy's with no `size`), by the kind of number they give
DRAWS = {**{f"random.{d}": "float" for d in ("random", "uniform", "gauss", "normalvariate", "lognormvariate",
                                              "betavariate", "expovariate", "gammavariate", "triangular",
                                              "vonmisesvariate", "paretovariate", "weibullvariate")},
         "random.randint": "int", "random.randrange": "int",
         **{f"numpy.random.{d}": "float" for d in ("rand", "randn", "random", "uniform", "normal", "beta",
                                                    "gamma", "exponential", "standard_normal", "random_sample")}}
# the generator objects that draw the same numbers as methods (`rng = np.random.default_rng(0)`; `rng.beta(a, b)`)
GENERATORS = {"numpy.random.default_rng": "numpy.random", "numpy.random.RandomState": "numpy.random",
              "numpy.random.Generator": "numpy.random", "random.Random": "random"}
NUMPY_DRAWS = {"integers": "int", "randint": "int", **{d.rpartition(".")[2]: k for d, k in DRAWS.items()
                                                        if d.startswith("numpy.")}}
# the positional arguments a NumPy draw takes before its `size` (one more gives an array: `rng.normal(0, 1, 8)`)
NUMPY_SCALAR_ARGS = {"integers": 2, "randint": 2, "random": 0, "random_sample": 0, "standard_normal": 0,
                     "uniform": 2, "normal": 2, "beta": 2, "gamma": 2, "exponential": 1, "rand": 0, "randn": 0}


def drawn_number(ctx, value: cst.BaseExpression, loops) -> Optional[Tuple[str, str]]:
    """(the draw, "float" | "int" | "bool") for an argument drawn afresh from a random generator at each call in a
    loop (`opt(x, random.uniform(0.5, 1.5))`, `rng.beta(a, a)` of a NumPy generator the function made), or for a
    local the loop sets once from such a draw (`use_cutmix = random.random() < p`: a bool; `lam = rng.beta(a, a)`):
    a new value at every call."""
    if not loops:
        return None
    if isinstance(value, cst.Name):
        bound = _set_once(loops[-1], value.value)
        found = _draw(ctx, bound) if bound is not None else None
        if found:
            kind = "bool" if isinstance(bound, (cst.Comparison, cst.BooleanOperation)) else found[1]
            return value.value, kind
        return None
    return _draw(ctx, value)


def _set_once(loop: cst.CSTNode, name: str) -> Optional[cst.BaseExpression]:
    binds = [n for n in descendants(loop.body) if isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For))
             and any(isinstance(t, cst.Name) and t.value == name or
                     isinstance(t, cst.Tuple) and any(isinstance(e.value, cst.Name) and e.value.value == name
                                                      for e in t.elements) for t in _targets(n))]
    if len(binds) != 1 or not isinstance(binds[0], cst.Assign) or len(binds[0].targets) != 1 or \
            not isinstance(binds[0].targets[0].target, cst.Name):
        return None
    return binds[0].value


def _draw(ctx, node: cst.BaseExpression) -> Optional[Tuple[str, str]]:
    """(the draw, its kind) for the first draw of one random number in `node` (itself, or in a comparison or
    arithmetic made of it)."""
    for n in [node, *descendants(node)]:
        if not isinstance(n, cst.Call) or any(a.keyword and a.keyword.value == "size" for a in n.args):
            continue
        name = ctx.qualify(n.func) or ""
        kind = DRAWS.get(name)
        if kind and not (name.startswith("numpy.") and _array_drawn(name.rsplit(".", 1)[1], n)):
            return f"{source_of(n.func)}()", kind             # (`np.random.rand(3)`: an array)
        made = _generator(ctx, n.func.value.value, ctx.position(n)[0]) if isinstance(n.func, cst.Attribute) and \
            isinstance(n.func.value, cst.Name) else None
        if made == "numpy.random" and not _array_drawn(n.func.attr.value, n):
            kind = NUMPY_DRAWS.get(n.func.attr.value)
        elif made == "random":
            kind = DRAWS.get(f"random.{n.func.attr.value}")
        else:
            kind = None
        if kind:
            return f"{source_of(n.func)}()", kind
    return None


def _array_drawn(draw: str, call: cst.Call) -> bool:
    """A NumPy draw given a size by position (`rng.normal(0.0, 1.0, 8)`, `np.random.rand(3)`): an array."""
    return sum(a.keyword is None and not a.star for a in call.args) > NUMPY_SCALAR_ARGS.get(draw, 2)


def _generator(ctx, name: str, line: int) -> Optional[str]:
    """"numpy.random" or "random" when `name` is bound, in the function around the check or at the top of the
    file, to a random generator object (`rng = np.random.default_rng(0)`)."""
    ix, tree = ctx.index, guard_lines.parsed(ctx.source or "")
    here = guard_lines.innermost_function(ctx.source or "", line)
    if ix is None or tree is None:
        return None
    for scope in ([here] if here is not None else []) + [tree]:
        for n in ast.walk(scope) if scope is here else scope.body:
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and \
                    any(isinstance(t, ast.Name) and t.id == name for t in n.targets):
                found = GENERATORS.get(ix.qualify(dotted_name(n.value.func) or ""))
                if found:
                    return found
    return None


def set_by_callers(ctx, value: cst.BaseExpression) -> Optional[Tuple[str, str]]:
    """(`self.attr`, its kind) for a number a method reads from its own object and hands to compiled code, where
    a function of the project calls that method on an object of the class in a loop that changes the attribute
    between two calls: `d.temperature = d.temperature / 2`, or a call of a method of the class that assigns it
    (`for epoch ...: for batch ...: d.step(batch)` ... `d.temperature = ...`)."""
    if not (isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and
            value.value.value == "self") or not ctx.class_name or ctx.project is None or ctx.index is None:
        return None
    attr, method = value.attr.value, (ctx.qualname or "").rpartition(".")[2]
    info = ctx.index.classes.get(ctx.class_name)
    cls = class_def(ctx.source or "", info) if info is not None else None
    kind = _attribute_kind(cls, attr) if cls is not None else None
    if kind is None:
        return None
    memo = ctx.project.per_run(_callers_memo)
    key = (ctx.path, cls.name, method, attr)
    if key not in memo:
        memo[key] = _changed_by_a_caller(ctx, cls, method, attr)
    return (f"self.{attr}", kind) if memo[key] else None


def _callers_memo() -> dict:
    """(file, class, method, attribute) -> whether a caller changes it between calls (`set_by_callers`)."""
    return {}


def _changed_by_a_caller(ctx, cls: ast.ClassDef, method: str, attr: str) -> bool:
    setters = _setters(cls, attr)
    for rel, cix in sorted(ctx.project.by_path.items()):
        for f in cix.functions.values():
            objs = {c.target.partition(".")[0] for c in f.calls if c.kind == "name" and
                    c.target.count(".") == 1 and c.target.endswith(f".{method}")}
            objs = {o for o in objs if any(cix.qualify(b).rpartition(".")[2] == cls.name for b in cix.built(o, f))}
            source = (ctx.source if rel == ctx.path else ctx.project.sources(rel) if ctx.project.sources
                      else None) if objs else None
            fn = guard_lines.function_at(source, f.def_line) if source else None
            if fn is not None and any(_changes_between_calls(fn, obj, method, attr, setters) for obj in objs):
                return True
    return False


def _changes_between_calls(fn: ast.AST, obj: str, method: str, attr: str, setters: List[str]) -> bool:
    """A loop of `fn` that calls `obj.<method>(...)` and also assigns `obj.<attr>` or calls a setter of it."""
    def calls(node, names) -> bool:
        return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in names and
                   isinstance(n.func.value, ast.Name) and n.func.value.id == obj for n in ast.walk(node))
    for loop in (n for n in ast.walk(fn) if isinstance(n, (ast.For, ast.While))):
        if not calls(loop, {method}):
            continue
        sets = any(isinstance(n, (ast.Assign, ast.AugAssign)) and
                   any(dotted_name(t) == f"{obj}.{attr}" for t in (n.targets if isinstance(n, ast.Assign)
                                                                   else [n.target])) for n in ast.walk(loop))
        if sets or calls(loop, set(setters)):
            return True
    return False


def list_index(ctx, entry: Optional[str], param: Optional[str]) -> Optional[tuple]:
    """The span of the first subscript of a Python list or tuple by the int parameter `param` (or arithmetic on
    it) in the function `entry` of this file (`self.alphas_cumprod[timestep]`, the attribute filled by `append`
    or a list display): Dynamo cannot index a Python list with a symbolic int, so it specialises the int there,
    and every new value fails that guard, although the int became dynamic at its first change."""
    ix, source = ctx.index, ctx.source or ""
    info = ix.functions.get(entry or "") if ix is not None and param else None
    fn = guard_lines.function_at(source, info.def_line) if info is not None else None
    if fn is None:
        return None
    cls = class_def(source, ix.classes[info.cls]) if info.cls in ix.classes else None
    subscripts = sorted((n for n in ast.walk(fn) if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load)
                         and _indexed_by(n.slice, param)), key=lambda n: (n.lineno, n.col_offset))
    for n in subscripts:
        if python_list(n.value, fn, cls, guard_lines.parsed(source)):
            return guard_lines.span_of(source, n)
    return None


def _indexed_by(index: ast.expr, param: str) -> bool:
    if isinstance(index, ast.Name):
        return index.id == param
    return isinstance(index, ast.BinOp) and any(isinstance(n, ast.Name) and n.id == param for n in ast.walk(index))


def python_list(receiver: ast.expr, fn: ast.AST, cls: Optional[ast.ClassDef], tree: Optional[ast.Module]) -> bool:
    """Every value bound to `receiver` (`self.X` in the class's methods; a name in the function, else at the top
    of the file) is a list or tuple display, a comprehension, or `list(...)`/`tuple(...)`/`sorted(...)`."""
    if isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name) and receiver.value.id == "self":
        values = [n.value for m in (_methods(cls).values() if cls is not None else ())
                  for n in _assigned(m, receiver.attr) if isinstance(n, ast.Assign)]
    elif isinstance(receiver, ast.Name):
        def bound(scope, nodes):
            return [n.value for n in nodes if isinstance(n, ast.Assign) and
                    any(isinstance(t, ast.Name) and t.id == receiver.id for t in n.targets)]
        values = bound(fn, ast.walk(fn)) or (bound(tree, tree.body) if tree is not None else [])
    else:
        return False
    return bool(values) and all(_listish(v) or _sliced(v, receiver) for v in values)


def _sliced(e: ast.expr, receiver: ast.expr) -> bool:
    """`self.mems = self.mems[-k:]`: a slice of the receiver itself, of its kind."""
    return isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Slice) and \
        guard_lines.dotted(e.value) == guard_lines.dotted(receiver)


def _listish(e: ast.expr) -> bool:
    if isinstance(e, (ast.List, ast.ListComp, ast.Tuple)):
        return True
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in ("list", "tuple", "sorted"):
        return True
    if isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Slice):
        return _listish(e.value)                 # `[...][::-1]`
    return isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add) and _listish(e.left) and _listish(e.right)


def attribute_elements(ctx, loop: cst.CSTNode, name: str) -> Optional[str]:
    """"int" when `for <name> in obj.attr:` iterates an attribute that the object's class only ever binds to lists
    of ints (`self.timesteps = [i * ratio for i in range(n)][::-1]`, `list(range(...))`, a display of int
    literals; an empty list aside): each iteration binds another Python int. The object is `self`, one the
    function builds, or a parameter every caller passes one of the file's instances as."""
    from dynlint.analysis.held import held_by_name
    it = getattr(loop, "iter", None)
    if not (isinstance(loop, cst.For) and isinstance(loop.target, cst.Name) and loop.target.value == name and
            isinstance(it, cst.Attribute) and isinstance(it.value, cst.Name)) or ctx.index is None:
        return None
    obj, attr, ix = it.value.value, it.attr.value, ctx.index
    here = ix.functions.get(ctx.qualname or "")
    if obj == "self":
        classes = [ctx.class_name] if ctx.class_name in ix.classes else []
    else:
        classes = [c for c in ix.built(obj, here) if c in ix.classes]
        if not classes and here is not None and obj in here.params and ctx.project is not None:
            held = held_by_name(ctx.project, ix, here, obj)
            classes = [c for c in ix.classes if ix.qualify(c) in held]
    cls = class_def(ctx.source or "", ix.classes[classes[0]]) if len(classes) == 1 else None
    values = [n.value for m in (_methods(cls).values() if cls is not None else ()) for n in _assigned(m, attr)
              if isinstance(n, ast.Assign)]
    filled = [v for v in values if not (isinstance(v, ast.List) and not v.elts)]
    return "int" if filled and all(_int_list(v) for v in filled) else None


def _int_list(e: ast.expr) -> bool:
    if isinstance(e, ast.List):
        return all(isinstance(x, ast.Constant) and type(x.value) is int for x in e.elts)
    if isinstance(e, ast.ListComp):
        return _int_arithmetic(e.elt)
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in ("list", "sorted") and \
            len(e.args) == 1:
        arg = e.args[0]
        return isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id == "range" or \
            _int_list(arg)
    return isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Slice) and _int_list(e.value)


def _int_arithmetic(e: ast.expr) -> bool:
    """Names, int literals and `+ - * // %` of them (no float literal, no true division)."""
    if isinstance(e, ast.Constant):
        return type(e.value) is int
    if isinstance(e, (ast.Name, ast.Attribute)):
        return True
    if isinstance(e, ast.BinOp):
        return isinstance(e.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)) and \
            _int_arithmetic(e.left) and _int_arithmetic(e.right)
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in ("int", "round", "len"):
        return True
    return isinstance(e, ast.UnaryOp) and _int_arithmetic(e.operand)


def math_call(ctx, entry: Optional[str], param: Optional[str]) -> Optional[tuple]:
    """The span of the first call of a `math` function on the number parameter `param` (or arithmetic on it) in
    the function `entry` of this file (`math.exp(-n / tau)`): Dynamo evaluates it on a concrete value, so a number
    that became dynamic at its first change is specialised there again, and every new value fails that guard."""
    ix, source = ctx.index, ctx.source or ""
    info = ix.functions.get(entry or "") if ix is not None and param else None
    fn = guard_lines.function_at(source, info.def_line) if info is not None else None
    if fn is None:
        return None
    calls = sorted((n for n in ast.walk(fn) if isinstance(n, ast.Call) and
                    ix.qualify(dotted_name(n.func) or "").startswith("math.") and
                    any(isinstance(m, ast.Name) and m.id == param for a in n.args for m in ast.walk(a))),
                   key=lambda n: (n.lineno, n.col_offset))
    return guard_lines.span_of(source, calls[0]) if calls else None


INEQUALITIES = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def branch_guard(ctx, entry: Optional[str], param: Optional[str]) -> Optional[tuple]:
    """The span where Dynamo guards a branch on the int parameter `param` of the function `entry` of this file
    once the int is dynamic (after its first change): the first `if`/`while`/conditional-expression test that
    compares it (or a local computed from it) with something. The branch's side is guarded, so the first value on
    its other side recompiles again (a sampler's `if t > 0:` at the last step). Measured on torch 2.13: the
    guard stands at the test (`1 <= t`, `t != 0`), except that an inequality on the int, or on the int plus
    constants (`prev = t - 3`), is folded into the range that a tensor index by them sets (`table[t]`, before
    the test or in its branch), and Dynamo names the first such index (`1 <= t <= 9`, `3 <= t <= 9`)."""
    ix, source = ctx.index, ctx.source or ""
    info = ix.functions.get(entry or "") if ix is not None and param else None
    fn = guard_lines.function_at(source, info.def_line) if info is not None else None
    if fn is None:
        return None
    derived, linear = _computed_from(fn, param)
    tests = sorted((n.test for n in ast.walk(fn) if isinstance(n, (ast.If, ast.While, ast.IfExp))),
                   key=lambda t: (t.lineno, t.col_offset))
    for test in tests:
        compare = next((c for c in ast.walk(test) if isinstance(c, ast.Compare) and len(c.ops) == 1 and
                        any(isinstance(e, ast.Name) and e.id in derived for e in (c.left, c.comparators[0]))), None)
        if compare is None:
            continue
        own = any(isinstance(e, ast.Name) and e.id in linear for e in (compare.left, compare.comparators[0]))
        index = min((n for n in ast.walk(fn) if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load)
                     and any(_indexed_by(n.slice, name) for name in linear)),
                    key=lambda n: (n.lineno, n.col_offset), default=None)
        folded = own and isinstance(compare.ops[0], INEQUALITIES) and index is not None
        return guard_lines.span_of(source, index if folded else test)
    return None


def _computed_from(fn: ast.AST, param: str) -> Tuple[set, set]:
    """The names `fn` computes from `param` by arithmetic (and `param`), and those of them that are `param` plus
    constants (`prev = t - 3`: its range is the int's)."""
    derived, linear = {param}, {param}
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.BinOp) and _indexed_by(n.value, param):
            names = {t.id for t in n.targets if isinstance(t, ast.Name)}
            derived |= names
            if all(isinstance(e, (ast.Name, ast.Constant, ast.BinOp, ast.operator, ast.expr_context)) and
                   (not isinstance(e, ast.Name) or e.id == param) for e in ast.walk(n.value)):
                linear |= names
    return derived, linear
