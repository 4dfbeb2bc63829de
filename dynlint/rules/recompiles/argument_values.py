"""What kind of value an argument of a compiled call carries from the code around the call: a loop variable, a
number the loop reads anew or carries from one iteration to the next, a display or conditional built from
them, an item of a dict display (read by DYN501 in scalars.py, and by the families that share its loops)."""
from __future__ import annotations

import ast
from typing import List, Optional, Tuple

import libcst as cst

from dynlint.analysis import guard_lines
from dynlint.linter.walker import children, descendants, dotted
from dynlint.rules.recompiles.common import (float_expr, literal_kind, loop_changed, loop_grown, loop_numbers,
                                             names_in, number_read, size_read, varying)


def kept_attribute(source: str, value: cst.BaseExpression, var: str) -> Optional[Tuple[str, cst.BaseExpression]]:
    """(the attribute, the argument) where an object built from the changing `var` keeps it: `Cfg(temperature=t)`
    or `Opts(s)` for a dataclass of the file or a class whose `__init__` does `self.scale = scale`, a named tuple
    (`namedtuple("Params", ["alpha", "beta"])`, `class P(NamedTuple)`), `SimpleNamespace(gain=g)`. Dynamo guards
    that attribute by value where the compiled code first reads `cfg.temperature` (measured, torch 2.13); None
    when `value` is no such construction or more than one of its arguments is built from `var`."""
    if not isinstance(value, cst.Call) or any(a.star for a in value.args):
        return None
    name = dotted(value.func) or ""
    namespace = name.rpartition(".")[2] == "SimpleNamespace"
    params = [] if namespace else _record_fields(source, name)
    hit = [(a.keyword.value if a.keyword is not None else params[i] if i < len(params) else None, a.value)
           for i, a in enumerate(value.args) if var in names_in(a.value)]
    if not (namespace or params) or len(hit) != 1 or not (namespace or hit[0][0] in params):
        return None
    attr = hit[0][0] if namespace else _kept_as(source, name, hit[0][0])
    return (attr, hit[0][1]) if attr else None


def _record_fields(source: str, name: str) -> List[str]:
    """The parameters, in order, of a module-level record class of the file: a dataclass's fields, a named
    tuple's, the parameters of an `__init__`; empty for anything else."""
    from dynlint.rules.recompiles.constants import class_fields
    tree = guard_lines.parsed(source)
    for n in tree.body if tree is not None else ():
        if isinstance(n, ast.ClassDef) and n.name == name:
            if any(guard_lines.dotted(b) in ("NamedTuple", "typing.NamedTuple") for b in n.bases):
                return [s.target.id for s in n.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
            return list(class_fields(n) or ())
        if isinstance(n, ast.Assign) and [guard_lines.dotted(t) for t in n.targets] == [name] and \
                isinstance(n.value, ast.Call) and guard_lines.dotted(n.value.func) in (
                    "namedtuple", "collections.namedtuple") and len(n.value.args) == 2:
            spec = n.value.args[1]
            if isinstance(spec, ast.Constant) and isinstance(spec.value, str):
                return spec.value.replace(",", " ").split()
            if isinstance(spec, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) for e in spec.elts):
                return [e.value for e in spec.elts]
    return []


def _kept_as(source: str, name: str, param: str) -> Optional[str]:
    """The attribute the file's record class `name` keeps its parameter `param` as (a dataclass's or a named
    tuple's field is its own; `self.scale = scale` in an `__init__`)."""
    from dynlint.rules.recompiles.constants import class_fields
    tree = guard_lines.parsed(source)
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name), None) if tree else None
    fields = class_fields(cls) if cls is not None else None
    return (fields[param][0] or None) if fields and param in fields else param


def item_key(value: cst.BaseExpression, var: str) -> Optional[str]:
    """The constant key of a dict display whose item is the name `var` (`{"domain": d}`), else None."""
    if not isinstance(value, cst.Dict):
        return None
    return next((e.key.evaluated_value for e in value.elements if isinstance(e, cst.DictElement) and
                 isinstance(e.key, cst.SimpleString) and isinstance(e.value, cst.Name) and e.value.value == var),
                None)


def made_by_torch(node: ast.AST, resolve, depth: int = 0) -> bool:
    """A tensor made by a torch function, directly or through methods and names (`self.alphas_cumprod =
    torch.cumprod(1 - betas, dim=0)`): a list or a NumPy array indexed by a tensor is another matter."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            guard_lines.dotted(node.func.value) != "torch":
        node = node.func.value                      # `torch.arange(n).flip(0)`
    if isinstance(node, (ast.Name, ast.Attribute)) and depth < 4 and guard_lines.dotted(node) != "torch":
        return made_by_torch(resolve(node), resolve, depth + 1)
    return isinstance(node, ast.Call) and (guard_lines.dotted(node.func) or "").startswith("torch.")


def attribute_value(tree: ast.Module, cls: str, attr: str) -> Optional[ast.AST]:
    """The value of the one assignment `self.<attr> = ...` in the methods of the file's class `cls`; None when
    there is none or more than one."""
    found = [n.value for c in tree.body if isinstance(c, ast.ClassDef) and c.name == cls for n in ast.walk(c)
             if isinstance(n, ast.Assign) and any(guard_lines.dotted(t) == f"self.{attr}" for t in n.targets)]
    return found[0] if len(found) == 1 else None


def changing_number(ctx, value: cst.BaseExpression, call: cst.Call) -> Optional[Tuple[str, str]]:
    """(name, "float" or "int") for a number a loop around the call (a `for` or a `while`, the innermost
    first) reads anew each iteration from a value that changes: `t.item()` of the tensor it binds, `dt =
    min(dt_max, float(a.rsqrt()))` with `a` computed from the state it updates. A different number every call;
    the name is the local passed, or the changing name it is read from."""
    for loop in (b for b in reversed(ctx.blocks) if isinstance(b, (cst.For, cst.While))):
        bound = bound_in_loop(ctx, value, [loop], call) or value
        changed, grown, numbers = loop_changed(loop), loop_grown(loop), loop_numbers(loop)
        kind = number_read(bound, changed, grown, numbers)
        if kind:
            return (value.value if isinstance(value, cst.Name) else
                    sorted(names_in(bound) & (changed | set(grown) | set(numbers)))[0]), kind
    return None


def loop_origin(ctx, value: cst.BaseExpression, loops, call: cst.Call, depth: int = 0) -> Optional[Tuple[str, str]]:
    """`varying` through the locals the loops bind once (`frac = 1.0 - (update - 1.0) / n`, `coef = base * frac`
    ... `loss(x, coef)`): (the loop variable it is computed from, its kind); None when not known."""
    for name in sorted({value.value} if isinstance(value, cst.Name) else names_in(value)):
        bound = bound_in_loop(ctx, cst.Name(name), loops, call) if depth < 3 else None
        found = bound is not None and (varying(ctx, bound, loops) or loop_origin(ctx, bound, loops, call, depth + 1))
        if found:
            return found
    return None


def carried_number(ctx, value: cst.BaseExpression) -> Optional[Tuple[str, str]]:
    """(name, "int" | "float") for a Python number the innermost loop around the call carries from one
    iteration to the next: set to a number literal before the loop (an attribute of `self`: in `__init__`) and
    updated in it by arithmetic on itself, names and number literals (`step += 1`, `t += dt`, `eps *= 10`,
    `lr = lr * 0.9`, `self.step += 1`). Each call gets a new value."""
    loops = [b for b in ctx.blocks if isinstance(b, (cst.For, cst.While))]     # (a `while` carries them too)
    name = dotted(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
    fn = next((f for f in reversed(ctx.functions) if isinstance(f, cst.FunctionDef)), None)
    if name is None or not loops or fn is None or "." in name and not name.startswith("self."):
        return None
    updates = _bindings(loops[-1].body, name)
    if len(updates) != 1 or not _number_update(updates[0], name):
        return None
    start = ctx.position(loops[-1])[0]
    before = [v for n in _bindings(fn.body, name) if isinstance(n, cst.Assign) and len(n.targets) == 1 and
              ctx.position(n)[0] < start for v in [_value_of(n.targets[0].target, n.value, name)] if v is not None]
    kind = _first_number_kind(before[-1] if before else None, updates[0])
    if kind is None and name.startswith("self.") and not before:
        info = ctx.index.classes.get(ctx.class_name) if ctx.index is not None and ctx.class_name else None
        kind = info.scalars.get(name[5:]) if info is not None else None     # what `__init__` set it to
    return (name, kind) if kind in ("int", "float") else None


def _bindings(body: cst.CSTNode, name: str) -> List[cst.CSTNode]:
    """The statements in `body` that bind `name` (a name or `self.attr`)."""
    return [n for n in descendants(body) if isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For))
            and any(dotted(t) == name or name in names_in(t) for t in _targets(n))]


def _first_number_kind(first: Optional[cst.BaseExpression], update: cst.CSTNode) -> Optional[str]:
    """"float" or "int" from a carried number's first value (a literal, a size: `pos = prompt.shape[1]`,
    `len(xs)`, or `int(...)`/`float(...)` of anything) and its update (`/=` makes a float)."""
    first = first.expression if isinstance(first, cst.UnaryOperation) else first
    cast = first.func.value if isinstance(first, cst.Call) and isinstance(first.func, cst.Name) and \
        len(first.args) == 1 else None
    if isinstance(first, cst.Float) or cast == "float" or isinstance(update, cst.AugAssign) and \
            isinstance(update.operator, cst.DivideAssign):
        return "float"
    return "int" if isinstance(first, cst.Integer) or cast in ("int", "len") or size_read(first) else None


def _value_of(target: cst.BaseExpression, value: cst.BaseExpression, name: str) -> Optional[cst.BaseExpression]:
    """What `target = value` binds to `name` (`t, dt = 0.0, 0.25` binds 0.0 to `t`)."""
    if isinstance(target, (cst.Name, cst.Attribute)):
        return value if dotted(target) == name else None
    if isinstance(target, cst.Tuple) and isinstance(value, cst.Tuple) and len(target.elements) == len(value.elements):
        return next((v.value for t, v in zip(target.elements, value.elements)
                     if isinstance(t.value, cst.Name) and t.value.value == name), None)
    return None


def _targets(n: cst.CSTNode) -> List[cst.CSTNode]:
    return [t.target for t in n.targets] if isinstance(n, cst.Assign) else [n.target]


def _number_update(n: cst.CSTNode, name: str) -> bool:
    """`name += 1`, `t += dt`, `name *= 0.5`, `name = name * 0.9 + 1`, `name = max(0.05, name * 0.99)`:
    arithmetic on the name itself, other names and number literals (`min`, `max`, `abs`, `round` of such)."""
    def numeric(e: cst.BaseExpression) -> bool:
        if isinstance(e, (cst.Integer, cst.Float)):
            return True
        if isinstance(e, cst.UnaryOperation):
            return numeric(e.expression)
        if isinstance(e, cst.BinaryOperation):
            return numeric(e.left) and numeric(e.right)
        if isinstance(e, cst.Call) and isinstance(e.func, cst.Name) and e.func.value in ("min", "max", "abs", "round"):
            return bool(e.args) and all(a.keyword is None and not a.star and numeric(a.value) for a in e.args)
        return isinstance(e, cst.Name) or dotted(e) == name      # itself, or another number (`t += dt`)
    if isinstance(n, cst.AugAssign):
        return dotted(n.target) == name and numeric(n.value)
    return isinstance(n, cst.Assign) and len(n.targets) == 1 and dotted(n.targets[0].target) == name and \
        isinstance(n.value, (cst.BinaryOperation, cst.Call)) and numeric(n.value) and \
        any(dotted(e) == name for e in descendants(n.value) if isinstance(e, (cst.Name, cst.Attribute)))


def bound_in_loop(ctx, value: cst.BaseExpression, loops, call: cst.Call) -> Optional[cst.BaseExpression]:
    """What a local passed at `call` holds when the innermost loop around the call binds it once, above the
    call (`freq = w if epoch > 0 else None` ... `step(x, freq)`): that expression, which changes as the loop
    variable does; None otherwise."""
    if not isinstance(value, cst.Name) or not loops:
        return None
    binds = []
    for loop in reversed(loops):            # the innermost loop that binds it (`for update ...: coef = ...`)
        stack = [loop.body]
        while stack:
            n = stack.pop()
            if isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign)) or isinstance(n, (cst.For, cst.With)):
                targets = [t.target for t in n.targets] if isinstance(n, cst.Assign) else \
                    [n.target] if isinstance(n, (cst.AugAssign, cst.AnnAssign, cst.For)) else \
                    [i.asname.name for i in n.items if i.asname]
                if any(value.value in names_in(t) for t in targets):
                    binds.append(n)
            stack.extend(children(n))
        if binds:
            break
    if len(binds) != 1 or not isinstance(binds[0], cst.Assign) or len(binds[0].targets) != 1 or \
            not isinstance(binds[0].targets[0].target, cst.Name):
        return None
    return binds[0].value if ctx.position(binds[0])[0] < ctx.position(call)[0] else None


def _dict_keys(node: cst.BaseExpression) -> Optional[frozenset]:
    """The literal keys of a dict display (`{"clip": 1.0}`); None for anything else."""
    if not isinstance(node, cst.Dict) or not all(
            isinstance(e, cst.DictElement) and isinstance(e.key, (cst.SimpleString, cst.Integer)) for e in node.elements):
        return None
    return frozenset(e.key.value for e in node.elements)


def value_kind(value: cst.BaseExpression, var_kind: str, enums: frozenset = frozenset()) -> Optional[str]:
    """The kind of an argument built from a varying name of kind `var_kind`; None when not known. `enums`:
    the Enum classes of the file."""
    if isinstance(value, cst.Name):
        return var_kind
    if isinstance(value, (cst.Dict, cst.Tuple, cst.List)):
        return _display_kind(value, var_kind)
    if isinstance(value, cst.IfExp):
        return conditional_kind(value)
    if isinstance(value, cst.Subscript):
        return _picked_kind(value, enums)
    if _truth_value(value):
        return "bool"
    if float_expr(value):
        return "float"            # `step * 0.5`: a float made of the int
    if _has_string(value):
        return "str"
    return var_kind if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation)) else None


def _display_kind(value: cst.BaseExpression, var_kind: str) -> Optional[str]:
    """"dict", "tuple" or "list" for a display of numbers (or of such displays: `[(s, s), (s, 8)]`), one of them
    built from the varying name (Dynamo guards on each item, `image_sizes[0][0] == 4`: once, then the int is
    dynamic); None for one that holds anything else (or unpacks another: `{**base}`, `[*xs]`)."""
    if isinstance(value, cst.Dict) and not all(isinstance(e, cst.DictElement) for e in value.elements) or \
            not isinstance(value, cst.Dict) and any(isinstance(e, cst.StarredElement) for e in value.elements):
        return None
    kinds = [value_kind(e.value, var_kind) if not isinstance(e.value, (cst.Dict, cst.Tuple, cst.List)) else
             _display_kind(e.value, var_kind) or ("display" if _numbers(e.value) else "other")
             for e in value.elements]
    if not any(k not in (None, "display") for k in kinds) or \
            not all(k in ("int", "float", "tuple", "list", "display", None) for k in kinds):
        return None
    return "dict" if isinstance(value, cst.Dict) else "list" if isinstance(value, cst.List) else "tuple"


def _numbers(value: cst.BaseExpression) -> bool:
    """A display of number literals only (`(4, 8)`)."""
    return all(isinstance(e.value, (cst.Integer, cst.Float)) or
               isinstance(e.value, (cst.Tuple, cst.List)) and _numbers(e.value)
               for e in getattr(value, "elements", ()) if not isinstance(e, cst.StarredElement))


def conditional_kind(value: cst.IfExp) -> Optional[str]:
    """`t if i % 2 else None`: a None or a tensor (`0.7 if i % 2 else None`: a None or a float); `{"clip": 1.0} if i % 2 else {}`: a dict whose key set
    changes; `0.1 if step > 1 else 0.0`: one of two numbers (or strings, or bools) of one kind; None for any
    other conditional expression."""
    if any(isinstance(b, cst.Name) and b.value == "None" for b in (value.body, value.orelse)):
        other = literal_kind(value.orelse if isinstance(value.body, cst.Name) and value.body.value == "None"
                             else value.body)
        return f"None or {other}" if other in ("int", "float", "str", "bool") else "None or tensor"
    arms = {literal_kind(value.body), literal_kind(value.orelse)}
    if len(arms) == 1 and None not in arms:
        return arms.pop()
    keys = _dict_keys(value.body)
    return "dict" if keys is not None and _dict_keys(value.orelse) not in (None, keys) else None


def number_expr(node: ast.expr) -> bool:
    """Arithmetic of names and number literals, `min`/`max`/`abs`/`round`/`int`/`float` of such, or a conditional
    expression of them: a Python number when its names are."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.BinOp):
        return number_expr(node.left) and number_expr(node.right)
    if isinstance(node, ast.UnaryOp):
        return number_expr(node.operand)
    if isinstance(node, ast.IfExp):
        return number_expr(node.body) and number_expr(node.orelse)
    if isinstance(node, ast.Attribute):
        return guard_lines.dotted(node) in MATH_CONSTANTS
    return isinstance(node, ast.Call) and (isinstance(node.func, ast.Name) and node.func.id in (
        "min", "max", "abs", "round", "int", "float") or (guard_lines.dotted(node.func) or "").startswith("math.")) \
        and not node.keywords and all(number_expr(a) for a in node.args)


MATH_CONSTANTS = frozenset({"math.pi", "math.e", "math.tau", "math.inf"})
MATH_INTS = frozenset({"math.floor", "math.ceil", "math.trunc", "math.comb", "math.perm", "math.gcd",
                       "math.factorial", "math.isqrt", "math.lcm"})


def float_number(node: ast.expr) -> bool:
    """A `number_expr` that gives a float: a float literal, a true division, a `math` function of floats
    (`math.cos`, not `math.floor`) or a `math` constant."""
    return any(isinstance(n, ast.Constant) and isinstance(n.value, float) or
               isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) or
               isinstance(n, ast.Attribute) and guard_lines.dotted(n) in MATH_CONSTANTS or
               isinstance(n, ast.Call) and (guard_lines.dotted(n.func) or "").startswith("math.") and
               guard_lines.dotted(n.func) not in MATH_INTS for n in ast.walk(node))


def _picked_kind(value: cst.Subscript, enums: frozenset = frozenset()) -> Optional[str]:
    """An item picked from a literal tuple or list (`("relu", "gelu")[i % 2]`: a str; `(torch.float32,
    torch.float64)[i % 2]`: a dtype; members of an Enum class of the file: an enum); None for any other
    subscript."""
    items = [e.value for e in value.value.elements] if isinstance(value.value, (cst.Tuple, cst.List)) else []
    if items and all(isinstance(e, cst.SimpleString) for e in items):
        return "str"
    owners = {e.value.value for e in items if isinstance(e, cst.Attribute) and isinstance(e.value, cst.Name)}
    if items and len(owners) == 1 and all(isinstance(e, cst.Attribute) for e in items):
        return "dtype" if owners == {"torch"} else "enum" if owners <= enums else None
    return None


def _truth_value(value: cst.BaseExpression) -> bool:
    """A comparison, `and` / `or`, `not x` or `bool(x)`: a bool."""
    return isinstance(value, (cst.Comparison, cst.BooleanOperation)) or \
        (isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Not)) or \
        (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "bool")


def _has_string(node: cst.CSTNode) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (cst.SimpleString, cst.FormattedString)):
            return True
        if isinstance(n, (cst.BinaryOperation, cst.UnaryOperation)):
            stack.extend(children(n))
    return False


REPLACERS = frozenset({"replace", "dataclasses.replace"})       # `dataclasses.replace(base, dropout=0.1)`


def record_rows(ctx, value: cst.BaseExpression, loops, first_read) -> List[Tuple[str, str, str]]:
    """(the loop variable, the attribute, the kind of its values) for each field of the objects a loop hands over
    one at a time (`for cfg in [Cfg(), Cfg(act="silu"), dataclasses.replace(base, p=0.1)]`) whose change fails a
    guard: the list named once in the function or the module, its elements records of one class of the file (a
    dataclass, a named tuple, a class whose `__init__` keeps its parameters) or copies with fields replaced
    (`replace`, `._replace`). Dynamo guards each attribute the compiled code reads by value, where it first reads
    it (`first_read(attr)`: that line, None where it is not read), and a new object is checked against each
    graph kept: the guard that fails is that of the first attribute read that differs from the graph's row (one
    that is None on one side and not on the other first), a number seen with two values being dynamic in the
    graphs compiled after (measured, torch 2.13). A field alike in every row, or that changes only beside one
    that fails first, does not."""
    from dynlint.rules.recompiles.common import _code, _named_iterable
    if not isinstance(value, cst.Name):
        return []
    loop = next((lp for lp in reversed(loops) if isinstance(lp, cst.For) and isinstance(lp.target, cst.Name) and
                 lp.target.value == value.value), None)
    elements = _named_iterable(ctx, loop.iter) if loop is not None else None
    rows = [_record_of(ctx, e.value) for e in elements.elements] \
        if isinstance(elements, (cst.List, cst.Tuple)) and len(elements.elements) > 1 else []
    if not rows or any(r is None for r in rows) or len({cls for cls, _ in rows}) != 1:
        return []
    cls = rows[0][0]
    defaults = _record_defaults(ctx.source or "", cls)
    shown = [{**defaults, **{f: _normal(_code(v)) for f, v in fields.items()}} for _, fields in rows]
    read = {f: first_read(_kept_as(ctx.source or "", cls, f)) for f in set().union(*shown)}
    kinds = {f: _values_kind([row.get(f) for row in shown]) for f in read}
    failing = _failing_guards(shown, {f: line for f, line in read.items() if line is not None}, kinds)
    return [(value.value, _kept_as(ctx.source or "", cls, f), kinds[f]) for f in sorted(failing)]


def _failing_guards(shown: List[dict], read: dict, kinds: dict) -> set:
    """The fields whose guard fails as the rows `shown` come one at a time (`read`: where each is guarded): each
    new row is checked against every graph kept, failing at the first field that differs from the graph's row (a
    guard on whether it is None before those on values); a number seen with two values is dynamic in the
    graphs compiled after it (automatic dynamic). A row that a graph kept matches compiles nothing."""
    failing: set = set()
    entries: List[Tuple[dict, set]] = []        # (the row each graph was compiled for, its dynamic numbers)
    for r, row in enumerate(shown):
        failed = []
        for entry, dynamic in entries:
            differ = [f for f in read if row.get(f) != entry.get(f) and
                      not (f in dynamic and "None" not in (row.get(f), entry.get(f)))]
            if not differ:
                break
            failed.append(min(differ, key=lambda f: ((row.get(f) == "None") == (entry.get(f) == "None"), read[f], f)))
        else:
            failing.update(failed)
            entries.append((row, {f for f in read if kinds[f].rpartition(" ")[2] in ("int", "float") and
                                  len({x.get(f) for x in shown[:r + 1]} - {"None"}) > 1}))
    return failing


def _values_kind(shown: List[Optional[str]]) -> str:
    """The kind of the values a field takes (code, as `_normal` writes it): "float", "None or int", or "value"
    where they are not literals of one kind."""
    kinds = {literal_kind(cst.parse_expression(v)) for v in shown if v is not None and v != "None"}
    kind = kinds.pop() if len(kinds) == 1 and None not in kinds else "value"
    return f"None or {kind}" if "None" in shown and kind != "value" else kind


def built_fields(ctx, value: cst.BaseExpression, loops, first_read) -> List[Tuple[str, str, str]]:
    """(the loop variable, the attribute, its kind) for the fields whose guards fail where a loop builds a record
    from its variable, field by field (`cfg = replace(cfg, sigma_max=0.5 + 0.5 * epoch, use_clip=epoch >= 3)`,
    `Cfg(lr=lr, warm=step < 10)`): the numbers change together, so the first of them the compiled code reads
    (`first_read(attr)`: its line) fails at the first change, after which they are dynamic; a bool, a string or
    an Enum member fails its own guard when it changes (measured, torch 2.13)."""
    from dynlint.rules.recompiles.common import enum_classes, varying
    if not isinstance(value, cst.Call) or any(a.star for a in value.args):
        return []
    source, name = ctx.source or "", dotted(value.func) or ""
    replacing = name in REPLACERS or name.endswith("._replace")
    params = [] if replacing else _record_fields(source, name)
    if not (replacing or params):
        return []
    fields = []
    for i, a in enumerate(value.args[1:] if name in REPLACERS else value.args):
        field = a.keyword.value if a.keyword is not None else params[i] if i < len(params) else None
        found = varying(ctx, a.value, loops) if field else None
        kind = value_kind(a.value, found[1], enum_classes(source)) if found else None
        attr = (field if replacing else _kept_as(source, name, field)) if kind else None
        if attr and first_read(attr) is not None:
            fields.append((found[0], attr, kind))
    numbers = sorted((f for f in fields if f[2] in ("int", "float")), key=lambda f: (first_read(f[1]), f[1]))
    return numbers[:1] + [f for f in fields if f[2] not in ("int", "float")]


def _record_of(ctx, node: cst.BaseExpression, depth: int = 0):
    """(the record class, {field: the value it is given}) of an element of a loop's rows: a construction of a
    record class of the file, a copy of one with fields replaced, or a name the function binds once to either."""
    from dynlint.rules.recompiles.common import _bound_once
    if isinstance(node, cst.Name) and depth < 3:
        bound = _bound_once(ctx, node.value)
        return _record_of(ctx, bound, depth + 1) if bound is not None else None
    if not isinstance(node, cst.Call) or any(a.star for a in node.args):
        return None
    name = dotted(node.func) or ""
    if (name in REPLACERS or name.endswith("._replace")) and depth < 3:
        base = node.func.value if name.endswith("._replace") else node.args[0].value if node.args else None
        found = _record_of(ctx, base, depth + 1) if base is not None else None
        given = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        return (found[0], {**found[1], **given}) if found is not None else None
    params = _record_fields(ctx.source or "", name)
    if not params or len([a for a in node.args if a.keyword is None]) > len(params):
        return None
    return name, {(a.keyword.value if a.keyword is not None else params[i]): a.value for i, a in enumerate(node.args)}


def _normal(code: str) -> str:
    """Code as `ast.unparse` writes it: `"relu"` and `'relu'` alike."""
    try:
        return ast.unparse(ast.parse(code, mode="eval"))
    except SyntaxError:
        return code


def _record_defaults(source: str, name: str) -> dict:
    """{field: its default, as `ast.unparse` writes it} of the file's record class `name`."""
    from dynlint.rules.recompiles.constants import class_fields
    tree = guard_lines.parsed(source)
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name), None) if tree else None
    fields = (class_fields(cls) or {}) if cls is not None else {}
    return {f: ast.unparse(d) for f, (_, d) in fields.items() if d is not None}
