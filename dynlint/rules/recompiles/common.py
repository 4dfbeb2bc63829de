"""What the recompile rules (and the compile set-up rules) share: which Python scalars a loop binds, which names
of an argument vary between calls, and `SiteBookkeeping`, the base of site rules that follow names through one
top-level statement."""
from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from dynlint.analysis import guard_lines
from dynlint.analysis.held import held_by_name
from dynlint.analysis.names import COMPILE, strip_call
from dynlint.linter.walker import children, descendants, dotted
from dynlint.rules.common import TorchRule
from dynlint.rules.recompiles.handed import compiled_attribute, having


GRAD_OFF = frozenset({"torch.no_grad", "torch.inference_mode"})        # what turns grad mode off for its block


def _handed_elements(ctx, loop: cst.For, name: str) -> Optional[str]:
    """The kind of what `for <name> in <parameter>:` binds, from the literal lists every caller passes."""
    from dynlint.rules.recompiles.handed import passed_elements_kind
    if isinstance(loop, cst.For) and isinstance(loop.target, cst.Name) and loop.target.value == name and \
            isinstance(loop.iter, cst.Name):
        return passed_elements_kind(ctx, loop.iter.value)
    return None


def loop_scalar_kind(loop: cst.For, name: str) -> Optional[str]:
    """'int', 'str', 'float', 'bool' when `for <name> in ...` binds Python scalars, else None."""
    return _bound_kind(loop.target, loop.iter, name)


ORDERINGS = frozenset({"reversed", "sorted", "list", "tuple"})      # the same elements, in some order
ZIPPERS = frozenset({"zip", "product"})                              # rows of one element of each argument


def _bound_kind(target: cst.BaseExpression, it: cst.BaseExpression, name: str) -> Optional[str]:
    """The kind of what iterating `it` binds to `name` somewhere in `target`. The elements follow the iterable
    through the builtins that pass them on: `range` gives ints, `reversed`/`sorted`/`list`/`tuple` the same
    elements, `enumerate` a count beside each element, `zip` and `itertools.product` a row of one element of
    each argument; a literal list gives the kind of its literals."""
    while isinstance(it, cst.Call) and _callee(it) in ORDERINGS and len(it.args) == 1 and not it.args[0].star:
        it = it.args[0].value
    if isinstance(it, cst.Call):
        return _rows_kind(target, it, name)
    if isinstance(it, (cst.List, cst.Tuple, cst.Set)) and isinstance(target, cst.Name) and target.value == name \
            and it.elements:
        kinds = {literal_kind(e.value) for e in it.elements}
        if None in kinds:
            return _tuple_literals_kind(it) or _dtypes_kind(it)
        if len({_code(e.value) for e in it.elements}) == 1:
            return None                 # the same value at every iteration (`[3]`, `[0.5, 0.5]`)
        return kinds.pop() if len(kinds) == 1 else "value"
    if isinstance(it, (cst.List, cst.Tuple)) and isinstance(target, cst.Tuple) and it.elements:
        return _tuple_rows_kind(target, it, name)
    return None


def _rows_kind(target: cst.BaseExpression, it: cst.Call, name: str) -> Optional[str]:
    """`_bound_kind` of a call: `range`, `enumerate`, `zip`, `itertools.product`."""
    callee = _callee(it)
    if any(a.keyword is not None or a.star for a in it.args):
        return None
    if callee == "range":
        return "int" if isinstance(target, cst.Name) and target.value == name else None
    if callee == "enumerate" and len(it.args) == 1:
        parts: List[Optional[cst.BaseExpression]] = [None, it.args[0].value]
    elif callee in ZIPPERS and it.args:
        parts = [a.value for a in it.args]
    else:
        return None
    if not isinstance(target, (cst.Tuple, cst.List)) or len(target.elements) != len(parts):
        return None
    for element, part in zip(target.elements, parts):
        if part is None:            # enumerate's count
            if isinstance(element.value, cst.Name) and element.value.value == name:
                return "int"
        else:
            kind = _bound_kind(element.value, part, name)
            if kind:
                return kind
    return None


def _callee(call: cst.Call) -> Optional[str]:
    """The name a call's function is known by: `zip`, or `product` for `itertools.product`."""
    func = call.func
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "itertools":
        return func.attr.value
    return None


DTYPES = frozenset({"float32", "float64", "float16", "bfloat16", "half", "float", "double", "int8", "int16",
                    "int32", "int64", "long", "int", "uint8", "bool", "complex64", "complex128"})


def _dtypes_kind(it) -> Optional[str]:
    """`for dtype in (torch.float32, torch.float64)`: "dtype" when every element is a torch dtype, not all the
    same."""
    def dtype(e) -> bool:
        return isinstance(e, cst.Attribute) and isinstance(e.value, cst.Name) and e.value.value == "torch" and \
            e.attr.value in DTYPES
    names = {e.value.attr.value for e in it.elements if dtype(e.value)}
    return "dtype" if len(names) > 1 and all(dtype(e.value) for e in it.elements) else None


def _tuple_literals_kind(it) -> Optional[str]:
    """`for size in [(4, 4), (6, 3)]` (or lists, `([2, 4], [3, 3])`): "tuple" when every element is a tuple or
    list of number literals, of one length, and they are not all alike (Dynamo guards each item it reads)."""
    rows = [e.value for e in it.elements]
    if not all(isinstance(r, (cst.Tuple, cst.List)) and r.elements and
               all(literal_kind(x.value) in ("int", "float") for x in r.elements) for r in rows):
        return None
    shown = {tuple(cst.Module([]).code_for_node(x.value) for x in r.elements) for r in rows}
    return "tuple" if len({len(t) for t in shown}) == 1 and len(shown) > 1 else None


def _tuple_rows_kind(target: cst.Tuple, it, name: str) -> Optional[str]:
    """`for n, alpha in [(1, 0.5), (2, 0.25)]`: the kind of the literals at the name's place in each tuple."""
    names = [e.value.value if isinstance(e.value, cst.Name) else None for e in target.elements]
    rows = [e.value.elements for e in it.elements if isinstance(e.value, cst.Tuple)]
    if len(rows) != len(it.elements) or any(len(r) != len(names) for r in rows):
        return None
    if name not in names:               # `for (h, w), n in [((24, 32), 3), ...]`: the nested tuple's column
        inner = next((i for i, e in enumerate(target.elements) if isinstance(e.value, cst.Tuple) and
                      name in names_in(e.value)), None)
        return _tuple_rows_kind(target.elements[inner].value, cst.List([cst.Element(r[inner].value) for r in rows]),
                                name) if inner is not None else None
    column = [r[names.index(name)].value for r in rows]
    owners = {dotted(v.value) for v in column if isinstance(v, cst.Attribute)}
    if len(owners) == 1 and all(isinstance(v, cst.Attribute) for v in column) and \
            owners.pop().rpartition(".")[2][:1].isupper():
        # members of one class (`(Pooling.MEAN, Reduction.SUM)` rows): an Enum's, guarded on their identity
        return "enum" if len({_code(v) for v in column}) > 1 else None
    kinds = {literal_kind(v) for v in column}
    if None in kinds or len({_code(v) for v in column}) == 1:
        return None                     # (the same value in every row)
    return kinds.pop() if len(kinds) == 1 else "value"


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def literal_kind(node: cst.BaseExpression) -> Optional[str]:
    """The kind of a literal: "int", "float", "str" or "bool" (`-1` too); None for anything else."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return "bool"
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        return "str"
    return {cst.Integer: "int", cst.Float: "float"}.get(type(node))


def float_expr(node: cst.CSTNode) -> bool:
    """Arithmetic with a float literal or a true division: a float."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Float) or (isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Divide)):
            return True
        if isinstance(n, (cst.BinaryOperation, cst.UnaryOperation)):
            stack.extend(children(n))
    return False


def names_in(node: cst.CSTNode) -> Set[str]:
    out = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name):
            out.add(n.value)
        stack.extend(children(n))
    return out


def enum_classes(source: str) -> frozenset:
    """The names of the file's Enum (and Flag) classes: their members are constants a call can pass."""
    tree = guard_lines.parsed(source)
    return frozenset(c.name for c in (tree.body if tree is not None else ()) if isinstance(c, ast.ClassDef) and
                     any((guard_lines.dotted(b) or "").endswith(("Enum", "Flag")) for b in c.bases))


def _enum_members(ctx, loop: cst.For, name: str) -> Optional[str]:
    """`for mode in [Mode.FAST, Mode.SLOW]` (a list or tuple of members of an Enum class of the file, or the
    class itself): "enum", each member a constant Dynamo guards by identity; a list of functions
    (`_functions`): "function"."""
    it = loop.iter
    while isinstance(it, cst.Call) and _callee(it) in ORDERINGS and len(it.args) == 1 and not it.args[0].star:
        it = it.args[0].value
    if isinstance(loop.target, cst.Name) and loop.target.value == name and isinstance(it, cst.Name) and \
            it.value in enum_classes(ctx.source or ""):
        tree = guard_lines.parsed(ctx.source or "")
        cls = next(c for c in tree.body if isinstance(c, ast.ClassDef) and c.name == it.value)
        return "enum" if sum(isinstance(s, ast.Assign) for s in cls.body) > 1 else None     # each member in turn
    if not (isinstance(loop.target, cst.Name) and loop.target.value == name and isinstance(it, (cst.List, cst.Tuple))
            and len(it.elements) > 1):
        return None
    if not all(isinstance(e.value, cst.Attribute) for e in it.elements):
        return _functions(ctx, it)
    owners = {dotted(e.value.value) for e in it.elements}
    if len(owners) == 1 and owners <= enum_classes(ctx.source or ""):
        return "enum" if len({_code(e.value) for e in it.elements}) > 1 else None
    return _functions(ctx, it)


def _functions(ctx, it) -> Optional[str]:
    """`[F.relu, F.gelu, swish]`: "function" when every element is a function of the project or a name of a
    module the file imports, not all the same: Dynamo guards each by identity where the code calls it."""
    ix = ctx.index
    names = [dotted(e.value) for e in it.elements]
    known = ix is not None and all(n and (n in ix.functions or n.split(".")[0] in ix.imports) for n in names)
    return "function" if known and len(set(names)) > 1 else None


def _named_elements(ctx, loop: cst.For, name: str) -> Optional[str]:
    """`lrs = [0.1, 0.05]` (or `[0.1 * 0.9 ** i for i in range(n)]`) once in the function, then `for lr in lrs`:
    the kind of the elements the name holds."""
    it = loop.iter
    wrapper = it if isinstance(it, cst.Call) and _callee(it) in ("enumerate", *ORDERINGS) and len(it.args) == 1 \
        else None                       # `for i, t in enumerate(ts)`: the elements of `ts`, counted
    named = wrapper.args[0].value if wrapper is not None else it
    bound = _bound_once(ctx, named.value) if isinstance(named, cst.Name) else None
    if bound is None:
        return None
    value = _returned_sequence(ctx, bound) or bound
    if wrapper is not None:
        return _bound_kind(loop.target, wrapper.with_changes(args=[wrapper.args[0].with_changes(value=value)]), name)
    if isinstance(value, cst.ListComp) and isinstance(loop.target, cst.Name) and loop.target.value == name:
        return literal_kind(value.elt) or ("float" if float_expr(value.elt) else None)
    return _bound_kind(loop.target, value, name) if isinstance(value, (cst.List, cst.Tuple, cst.Call)) else None


def _bound_once(ctx, name: str) -> Optional[cst.BaseExpression]:
    """What the enclosing function binds `name` to, where it binds it once (else a list or tuple display the
    module binds it to); None otherwise."""
    fn = next((f for f in reversed(ctx.functions) if isinstance(f, cst.FunctionDef)), None)
    if fn is None:
        return None
    values = [n.value for n in descendants(fn.body) if isinstance(n, cst.Assign) and
              any(isinstance(t.target, cst.Name) and t.target.value == name for t in n.targets)] or \
        module_constant(ctx.source or "", name)
    return values[0] if len(values) == 1 else None


def _named_iterable(ctx, it: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The display a loop iterates: `it` itself, or what `_bound_once` binds its name to, through `list(...)`."""
    while isinstance(it, cst.Call) and _callee(it) in ORDERINGS and len(it.args) == 1 and not it.args[0].star:
        it = it.args[0].value
    return _bound_once(ctx, it.value) if isinstance(it, cst.Name) else it


def module_constant(source: str, name: str) -> List[cst.BaseExpression]:
    """The list or tuple displays the module binds `name` to at its top level (`IMAGES = [((24, 32), 3), ...]`)."""
    tree = guard_lines.parsed(source)
    return [cst.parse_expression(ast.unparse(st.value)) for st in (tree.body if tree is not None else ())
            if isinstance(st, ast.Assign) and isinstance(st.value, (ast.List, ast.Tuple)) and
            any(isinstance(t, ast.Name) and t.id == name for t in st.targets)]


def _returned_sequence(ctx, value: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """What a call of a function of the file gives when its one `return` gives a `range(...)` (or `list`, `tuple`,
    `reversed`, `sorted` of one) or a display: `make_timesteps(1000, 6)` with `return list(range(999, -1,
    -stride))`; None for anything else."""
    ix = ctx.index
    info = ix.functions.get(value.func.value) if ix is not None and isinstance(value, cst.Call) and \
        isinstance(value.func, cst.Name) else None
    fdef = guard_lines.function_at(ctx.source or "", info.def_line) if info is not None else None
    returns = [n.value for n in ast.walk(fdef) if isinstance(n, ast.Return) and n.value is not None] \
        if fdef is not None else []
    if len(returns) != 1:
        return None
    ret = returns[0]
    while isinstance(ret, ast.Call) and isinstance(ret.func, ast.Name) and ret.func.id in ORDERINGS and \
            len(ret.args) == 1:
        ret = ret.args[0]
    if not (isinstance(ret, (ast.List, ast.Tuple)) or
            isinstance(ret, ast.Call) and isinstance(ret.func, ast.Name) and ret.func.id == "range"):
        return None
    return cst.parse_expression(ast.unparse(ret))


def varying(ctx, value: cst.BaseExpression, loops) -> Optional[Tuple[str, str]]:
    """(name, kind of its values) of a name in `value` that changes between calls: the variable of an
    enclosing loop (`loops`: the `for` statements around it; over an object's list of ints too), or a parameter of the enclosing function that a
    loop of this file passes its loop variable to (`for step in range(n): train_step(step)`)."""
    from dynlint.rules.recompiles.changing import attribute_elements
    names = {value.value} if isinstance(value, cst.Name) else names_in(value)
    for var in sorted(names):
        for loop in reversed(loops):
            kind = loop_scalar_kind(loop, var) or _handed_elements(ctx, loop, var) or \
                attribute_elements(ctx, loop, var) or _enum_members(ctx, loop, var) or \
                _named_elements(ctx, loop, var)
            if kind:
                return var, kind
    fn = next((f for f in reversed(ctx.functions) if isinstance(f, cst.FunctionDef)), None)
    ix = ctx.index
    if fn is None or ix is None or len(ctx.functions) > 1 or ctx.class_name:
        return None
    params = [p.name.value for p in fn.params.params]
    lines = (ctx.source or "").splitlines()
    calls = list(ix.module_calls) + [c for f in ix.functions.values() for c in f.calls]
    for var in sorted(names & set(params)):
        i = params.index(var)
        for c in calls:
            if c.kind == "name" and c.target == fn.name.value and i < len(c.args) and c.args[i]:
                kind = _caller_loop_kind(lines, c.line, c.args[i])
                if kind:
                    return var, kind
    return None


def loop_changed(loop) -> Set[str]:
    """The names whose value changes from one iteration of `loop` (a `for` or a `while`) to the next: what a
    `for` binds; a name the body updates from a value of the previous iteration (`t += dt`, `pos, vel =
    step(pos, vel)`, or a read of a name the body assigns only further down); and a name the body assigns from
    one of those (`a = accel(pos)`)."""
    steps: List[Tuple[Set[str], Set[str]]] = []        # (names bound, names read), in the order of the body
    stack: List[cst.CSTNode] = [loop.body]
    while stack:
        n = stack.pop()
        if isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(n, cst.Assign):
            steps.append((set().union(*(names_in(t.target) for t in n.targets)), names_in(n.value)))
        elif isinstance(n, (cst.AugAssign, cst.AnnAssign)) and n.value is not None:
            steps.append((names_in(n.target), names_in(n.value) | (
                names_in(n.target) if isinstance(n, cst.AugAssign) else set())))
        stack.extend(reversed(list(children(n))))
    changed = names_in(loop.target) if isinstance(loop, cst.For) else set()
    for i, (bound, read) in enumerate(steps):
        later = set().union(*(b for b, _ in steps[i:]))            # bound here or below: last iteration's value
        if read & later:
            changed |= bound
    grew = True
    while grew:
        grew = False
        for bound, read in steps:
            if read & changed and not bound <= changed:
                changed |= bound
                grew = True
    return changed


NUMBER_CASTS = {"float": "float", "int": "int", "round": "int"}


REDUCERS = {"sum": None, "max": None, "min": None, "mean": "float", "median": "float", "fmean": "float"}


def number_read(node: cst.BaseExpression, changed: Set[str], grown: Optional[dict] = None,
                numbers: Optional[dict] = None) -> Optional[str]:
    """"float" or "int" for a Python number read from a value that changes (`float(a.rsqrt())`, `int(n)`,
    `t.item()`, where the names in `changed` change; a size of what the loop grows, `tokens.shape[1]`,
    `tokens.size(1)`, `len(history)`, where the names in `grown` grow; an element or a statistic of a list the
    loop appends numbers to, `sorted(norms)[len(norms) // 2]`, `max(norms)`, `statistics.mean(norms)`, where
    `numbers` names those lists and their kind), or built from one by arithmetic, `min`, `max` or `abs`; None
    for anything else."""
    size, grown, numbers = _size_of(node), grown or {}, numbers or {}
    if size is not None and size[0] in grown and _same_dim(size[1], grown[size[0]]):
        return "int"
    listed = _listed_number(node, numbers)
    if listed:
        return listed
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "item" \
            and not node.args:
        return "float" if names_in(node.func.value) & changed else None
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
        name = node.func.value
        if name in NUMBER_CASTS and len(node.args) == 1:
            return NUMBER_CASTS[name] if names_in(node.args[0].value) & changed else None
        if name in ("min", "max", "abs") and node.args and not any(a.keyword or a.star for a in node.args):
            kinds = {number_read(a.value, changed, grown, numbers) for a in node.args} - {None}
            return ("float" if "float" in kinds else "int") if kinds else None
        return None
    if isinstance(node, cst.BinaryOperation):
        kinds = {number_read(node.left, changed, grown, numbers),
                 number_read(node.right, changed, grown, numbers)} - {None}
        return ("float" if "float" in kinds or isinstance(node.operator, cst.Divide) else "int") if kinds \
            else None
    if isinstance(node, cst.UnaryOperation):
        return number_read(node.expression, changed, grown, numbers)
    return None


def _listed_number(node: cst.BaseExpression, numbers: dict) -> Optional[str]:
    """The kind of an element (`norms[-1]`, `sorted(norms)[k]`) or a statistic (`max(norms)`, `sum(norms)`,
    `statistics.median(norms)`) of a list `numbers` names."""
    def listed(n: cst.BaseExpression) -> Optional[str]:
        while isinstance(n, cst.Call) and _callee(n) in ORDERINGS and len(n.args) == 1:
            n = n.args[0].value
        return numbers.get(n.value) if isinstance(n, cst.Name) else None
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        return listed(node.value)
    name = (dotted(node.func) or "").rpartition(".")[2] if isinstance(node, cst.Call) else None
    if name in REDUCERS and len(node.args) == 1 and not node.args[0].star and node.args[0].keyword is None:
        kind = listed(node.args[0].value)
        return (REDUCERS[name] or kind) if kind else None
    return None


def loop_numbers(loop) -> Dict[str, str]:
    """{name: "float" or "int"} for the lists a loop's body appends Python numbers to (`norms.append(n.item())`,
    `sizes.append(int(k))`): what they hold changes as the loop goes."""
    out: Dict[str, str] = {}
    for n in descendants(loop.body):
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "append" and \
                isinstance(n.func.value, cst.Name) and len(n.args) == 1 and not n.args[0].star:
            kind = number_read(n.args[0].value, names_in(n.args[0].value))
            if kind:
                out[n.func.value.value] = kind
    return out


def _size_of(node: cst.BaseExpression) -> Optional[Tuple[str, Optional[int]]]:
    """(the name whose size `node` reads, the dimension when a literal): `t.shape[i]`, `t.size(i)`, `len(t)`
    (dimension 0); None for anything else."""
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute) and \
            node.value.attr.value == "shape" and isinstance(node.value.value, cst.Name) and len(node.slice) == 1 \
            and isinstance(node.slice[0].slice, cst.Index):
        return node.value.value.value, _int_literal(node.slice[0].slice.value)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "size" \
            and len(node.args) == 1 and isinstance(node.func.value, cst.Name):
        return node.func.value.value, _int_literal(node.args[0].value)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len" and \
            len(node.args) == 1 and isinstance(node.args[0].value, cst.Name):
        return node.args[0].value.value, 0
    return None


def size_read(node: Optional[cst.BaseExpression]) -> bool:
    """`t.shape[i]`, `t.size(i)`: a size of a tensor, an int."""
    return node is not None and _size_of(node) is not None and not (
        isinstance(node, cst.Call) and isinstance(node.func, cst.Name))


def _int_literal(node: cst.BaseExpression) -> Optional[int]:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _int_literal(node.expression)
        return -inner if inner is not None else None
    return int(node.value) if isinstance(node, cst.Integer) else None


def _same_dim(read: Optional[int], grown: Optional[int]) -> bool:
    """A size read at dimension `read` is one that grows at `grown` (None: not known, so it may be)."""
    return read is None or grown is None or read == grown or (read < 0) != (grown < 0)


# concatenations and the dimension they grow (None: it depends on the rank)
GROWS = {"cat": 0, "concat": 0, "concatenate": 0, "vstack": 0, "hstack": None, "column_stack": 1}


def loop_grown(loop) -> Dict[str, Optional[int]]:
    """{name: the dimension it grows in} for the names a loop's body makes longer at each iteration: a tensor
    rebound to a concatenation that holds it (`tokens = torch.cat([tokens, nxt], dim=1)`: 1), a list it appends
    to or extends (`history.append(x)`: 0)."""
    out: Dict[str, Optional[int]] = {}
    for n in descendants(loop.body):
        if isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name) and \
                isinstance(n.value, cst.Call) and isinstance(n.value.func, cst.Attribute) and \
                n.value.func.attr.value in GROWS and n.value.args and \
                n.targets[0].target.value in names_in(n.value.args[0].value):
            dim = next((a.value for a in n.value.args[1:] if a.keyword is None or a.keyword.value in ("dim", "axis")),
                       None)
            out[n.targets[0].target.value] = GROWS[n.value.func.attr.value] if dim is None else _int_literal(dim)
        elif isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and \
                n.func.attr.value in ("append", "extend") and isinstance(n.func.value, cst.Name):
            out[n.func.value.value] = 0
    return out


def headers_around(lines: List[str], line: int, first: int = 1):
    """The lines that open the blocks around line `line` (found by indentation), innermost first, stripped;
    none above line `first`."""
    if not 0 < line <= len(lines):
        return
    indent = len(lines[line - 1]) - len(lines[line - 1].lstrip())
    for text in reversed(lines[max(first, 1) - 1:line - 1]):
        stripped = text.lstrip()
        if not stripped or stripped.startswith("#") or len(text) - len(stripped) >= indent:
            continue
        indent = len(text) - len(stripped)
        yield stripped
        if indent == 0:
            return


def _caller_loop_kind(lines: List[str], line: int, name: str) -> Optional[str]:
    """The kind of values `name` takes at line `line` when it is the variable of the `for` loop around that
    line (found by indentation; its header parsed and judged as `loop_scalar_kind` judges any loop)."""
    for stripped in headers_around(lines, line):
        if stripped.startswith("for ") and stripped.rstrip().endswith(":"):
            try:
                loop = cst.parse_statement(stripped.rstrip() + " pass\n")
            except cst.ParserSyntaxError:
                return None           # a header over several lines: not known here
            return loop_scalar_kind(loop, name) if isinstance(loop, cst.For) else None
    return None


def parameter_names(fn) -> Set[str]:
    """The parameter names of a def (not `*args` / `**kwargs`); none for anything else."""
    if not isinstance(fn, cst.FunctionDef):
        return set()
    ps = fn.params
    return {p.name.value for p in list(ps.params) + list(ps.kwonly_params) + list(ps.posonly_params)}


def _is_compile_call(rule: TorchRule, node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Call) and (rule.call_name(node) or "") in COMPILE


def bound_parameter(info, call: cst.Call, arg: cst.Arg) -> Optional[str]:
    """The parameter of the function `info` describes that `arg` of `call` binds (None when not known)."""
    if arg.star:
        return None
    if arg.keyword is not None:
        return arg.keyword.value
    i = [a for a in call.args if a.keyword is None and not a.star].index(arg)
    params = [p for p in info.params if p not in ("self", "cls")] if info.cls else info.params
    return params[i] if i < len(params) else None


def compiled_from(source: str, name: str, within: Optional[ast.AST] = None) -> Optional[ast.Call]:
    """The `torch.compile(...)` call (or `compile(...)` imported from torch) assigned to `name` (`fast =
    torch.compile(smooth, dynamic=False)`): in the function `within` when it assigns one there (a name such as
    `opt` is reused from function to function), else anywhere in the file; None when none is. A method rebound
    to its compiled self counts (`agent.act = torch.compile(agent.act)` for `agent.act`, `model.forward = ...`
    for `model`, whose calls run it)."""
    tree = guard_lines.parsed(source)
    names = (name, f"{name}.forward")
    for scope in ([within] if within is not None else []) + ([tree] if tree is not None else []):
        for node in ast.walk(scope):
            value = _compiled_branch(node.value) if isinstance(node, ast.Assign) else None
            if value is not None:       # `step = torch.compile(f) if compile_step else f`: compiled when so
                node = ast.Assign(targets=node.targets, value=value)
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                    any(isinstance(t, ast.Name) and t.id == name or isinstance(t, ast.Attribute) and
                        guard_lines.dotted(t) in names and not name.startswith("self") and node.value.args and
                        guard_lines.dotted(node.value.args[0]) == guard_lines.dotted(t)
                        for t in node.targets) and \
                    (guard_lines.dotted(node.value.func) or "").split(".")[-1] == "compile":
                return node.value
    return None


def _compiled_branch(value: ast.expr) -> Optional[ast.Call]:
    """The `...compile(...)` call one branch of a conditional expression makes, if any."""
    if not isinstance(value, ast.IfExp):
        return None
    return next((v for v in (value.body, value.orelse) if isinstance(v, ast.Call) and
                 (guard_lines.dotted(v.func) or "").split(".")[-1] == "compile"), None)


def _called_method(ix, cls: Optional[str]) -> Optional[str]:
    """The method that calling an instance of the file's class `cls` runs as the compiled frame: its `forward`
    (an nn.Module), else its `__call__` (a callable object compiled whole)."""
    return next((f"{cls}.{m}" for m in ("forward", "__call__") if cls in ix.classes and f"{cls}.{m}" in ix.functions),
                None)


def _decorated_compile(ix, qualname: str) -> bool:
    """The file's function `qualname` is decorated with `torch.compile` (or `torch.compile(...)`)."""
    info = ix.functions.get(qualname)
    return info is not None and any(ix.qualify(strip_call(d)) in COMPILE for d in info.decorators)


def compile_call(ctx, name: str, scope: Optional[str] = None) -> Optional[ast.Call]:
    """`compiled_from` for a name read in the function the rule is visiting, or in the function `scope` (a
    qualname) when given (its own assignment first)."""
    ix = ctx.index
    here = ix.functions.get(scope or ctx.qualname or "") if ix is not None else None
    scope = guard_lines.function_at(ctx.source or "", here.def_line) if here is not None else None
    return compiled_from(ctx.source or "", name, scope)


def call_bindings(ctx, callee: str, entry: str, span: Optional[Tuple[int, int]] = None) -> List[Tuple[int, int, dict]]:
    """An analysis: each call `callee(...)` of the file (of lines `span` only, when given: the function whose
    local `callee` is), in order, as (line, column, {parameter: (expression, passed)}): the syntax (`ast`) bound
    to each parameter of `entry` (the qualname of the function compiled as the frame: `self` left out of a
    method) by position or keyword, or its default where the call leaves it out (`passed` False); a `**kwargs`
    parameter gets the dict of the keywords no other parameter takes, a `*args` parameter the tuple of the
    positional arguments no other parameter takes. Calls that unpack arguments (`*args`,
    `**kw`) are left out: their binding is not known."""
    ix, source = ctx.index, ctx.source or ""
    info = ix.functions.get(entry) if ix is not None else None
    fn = guard_lines.function_at(source, info.def_line) if info is not None else None
    tree = guard_lines.parsed(source)
    if fn is None or tree is None:
        return []
    a = fn.args
    params = [p.arg for p in list(a.posonlyargs) + list(a.args)]
    defaults = defaults_of(a)
    if info.cls and params[:1] in (["self"], ["cls"]):
        params = params[1:]
    lines = source.splitlines()
    out = []
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == callee) or \
                any(isinstance(x, ast.Starred) for x in call.args) or any(k.arg is None for k in call.keywords) or \
                (span is not None and not span[0] <= call.lineno <= span[1]):
            continue
        out.append((call.lineno, guard_lines.column(lines, call.lineno, call.col_offset),
                    _bound(call, a, params, defaults)))
    return sorted(out, key=lambda c: (c[0], c[1]))


def defaults_of(a: ast.arguments) -> Dict[str, ast.expr]:
    """{parameter: its default expression} of a function's arguments, positional and keyword-only."""
    params = [p.arg for p in list(a.posonlyargs) + list(a.args)]
    defaults = dict(zip(params[len(params) - len(a.defaults):], a.defaults))
    defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
    return defaults


def _bound(call: ast.Call, a: ast.arguments, params: List[str], defaults: dict) -> dict:
    """`call_bindings`' {parameter: (expression, passed)} for one call."""
    given = {p: (e, True) for p, e in zip(params, call.args)}
    if a.vararg is not None:    # `*feats`: the positional arguments no parameter takes, as the tuple the frame gets
        rest = call.args[len(params):]
        given[a.vararg.arg] = (ast.Tuple(elts=list(rest), ctx=ast.Load()), bool(rest))
    named = set(params) | {p.arg for p in a.kwonlyargs}
    extra = [k for k in call.keywords if k.arg not in named] if a.kwarg is not None else []
    given.update({k.arg: (k.value, True) for k in call.keywords if k not in extra})
    if a.kwarg is not None:     # `**weights`: the keywords no parameter takes, as the dict the frame gets
        given[a.kwarg.arg] = (ast.Dict(keys=[ast.Constant(k.arg) for k in extra],
                                       values=[k.value for k in extra]), bool(extra))
    for p, d in defaults.items():
        given.setdefault(p, (d, False))
    return given


def _unwrapped(ix, arg: ast.expr) -> ast.expr:
    """What `torch.compile` wraps: `functools.partial(f, mode="mean")` runs f, its keywords bound (positional
    ones would shift f's parameters: left as they are)."""
    if isinstance(arg, ast.Call) and ix.qualify(guard_lines.dotted(arg.func) or "") == "functools.partial" and \
            len(arg.args) == 1:
        return arg.args[0]
    return arg


class SiteBookkeeping(TorchRule):
    """Helpers for site rules that follow names through one top-level statement."""
    scope = "site"

    CHANGES = "the value changes here"

    def between_calls(self, node: cst.CSTNode, constant: bool = False) -> bool:
        """The enclosing function calls compiled code of this file both before and after `node` (or `node` is
        in a loop that calls it): a value `node` sets changes between two calls. A `constant` sets the same
        value on every iteration of a loop: only between two calls of straight-line code does it change."""
        ix, compiled = self.ctx.index, self.compiled_names()
        info = ix.functions.get(self.ctx.qualname) if ix is not None else None
        if info is None:
            return False
        line = self.ctx.position(node)[0]
        lines = [c.line for c in info.calls if c.kind == "name" and c.target in compiled]
        loops = [self.ctx.position(b) for b in self.ctx.blocks if isinstance(b, (cst.For, cst.While))]
        in_loop = any(start <= ln <= end for start, _, end, _ in loops for ln in lines)
        if constant:
            return not in_loop and bool(lines) and min(lines) < line < max(lines)
        return bool(lines) and (in_loop or min(lines) < line < max(lines))

    def compiled_dynamic(self, name: str, value: bool = True) -> bool:
        """`name` is compiled with `dynamic=<value>` (`torch.compile(f, dynamic=True)`, or the decorator
        `@torch.compile(dynamic=True)` on the file's function `name`)."""
        def dynamic(call) -> bool:
            return isinstance(call, ast.Call) and any(k.arg == "dynamic" and isinstance(k.value, ast.Constant) and
                                                      k.value.value is value for k in call.keywords)
        if dynamic(compile_call(self.ctx, name)):
            return True
        info = self.ctx.index.functions.get(name) if self.ctx.index is not None else None
        fn = guard_lines.function_at(self.ctx.source or "", info.def_line) if info is not None else None
        return fn is not None and any(dynamic(d) for d in fn.decorator_list)

    def compiled_entry(self, name: str, scope: Optional[str] = None) -> Optional[str]:
        """The qualname, in this file, of the function Dynamo compiles as the frame when `name` is called (in the
        function the rule visits, or in the function `scope` when given): a compiled function of the file, or the
        `forward` of the file's module class `name` was built from."""
        ix = self.ctx.index
        if ix is None:
            return None
        if name in ix.functions and not ix.functions[name].cls:
            return name
        scope = scope or self.ctx.qualname or ""
        here = ix.functions.get(scope)
        if here is not None and _decorated_compile(ix, f"{scope}.{name}"):
            return f"{scope}.{name}"        # `@torch.compile def fn(...)` inside a test function or method
        wrapped = compile_call(self.ctx, name, scope)
        if wrapped is not None and wrapped.args:
            arg = _unwrapped(ix, wrapped.args[0])
            while isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute):
                arg = arg.func.value            # `Model(cfg).eval()`, `.to(device)`: the module itself
            inner = guard_lines.dotted(arg.func if isinstance(arg, ast.Call) else arg)
            # a function defined in the calling function (`def fn(...)` ... `opt = torch.compile(fn)`), else one
            # of the file's top level
            local = f"{scope}.{inner}" if here is not None else None
            for q in (local, inner):
                if q in ix.functions and not ix.functions[q].cls:
                    return q
            method = self._bound_method(here, inner or "")
            if method is not None:
                return method
            called = _called_method(ix, inner) if isinstance(arg, ast.Call) else None
            if called is not None:
                return called                   # `torch.compile(Model(cfg))`, a callable object's `__call__`
            name = inner or name
        for path, info in self.module_classes(name):
            if path == self.ctx.path and f"{info.name}.forward" in ix.functions:
                return f"{info.name}.forward"
        return None

    def _bound_method(self, here, dotted: str) -> Optional[str]:
        """`inst.method` where `inst` is built once from a class of this file, in the function `here` or at the
        top level (`agent = Agent()` ... `torch.compile(agent.td_target)`), or is a parameter every caller in
        the project passes one of (`torch.compile(scheduler.step)` in `sample(model, scheduler)`): that
        method's qualname."""
        ix, project = self.ctx.index, self.ctx.project
        head, _, attr = dotted.partition(".")
        made = ix.built(head, here)
        if not made and here is not None and head in here.params and project is not None:
            held = held_by_name(project, ix, here, head)
            made = [c for c in ix.classes if ix.qualify(c) in held]
        made = having(ix, made, attr)       # `DDIMScheduler(DDIMConfig())` builds both; one has the method
        cls = made[0] if len(made) == 1 else ""
        return f"{cls}.{attr}" if cls in ix.classes and f"{cls}.{attr}" in ix.functions and "." not in attr \
            else None

    def guard_span(self, function: str, value: Optional[str], at_entry: bool = True):
        """Where Dynamo guards a value that `function` (a qualname of this file) reads: its first read of
        `value` (a parameter, a global, `self.attr`) that needs it; with no `value`, or none read, the function's
        first line (where guards with no source line, on a tensor's metadata or on grad mode, are logged).
        None when the function is not in this file."""
        ix, source = self.ctx.index, self.ctx.source or ""
        info = ix.functions.get(function) if ix is not None else None
        fn = guard_lines.function_at(source, info.def_line) if info is not None else None
        if fn is None:
            return None
        read = guard_lines.guard_read(source, fn, value) if value else None
        return read or (guard_lines.entry_span(source, fn) if at_entry else None)

    def calls_compared(self, node: cst.CSTNode, analysis, names: Optional[Set[str]] = None):
        """For a call `f(...)` of a compiled name of this file (`names`: which count; the compiled names here by
        default): (f, the qualname of the function it runs, the call's (line, column), what `analysis` (an
        analysis of `call_bindings`' shape) found at this call, and at every call of f in the file, in order).
        None for any other call."""
        from dynlint.rules.recompiles.handed import compiled_parameter
        if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Name):
            return None
        callee = node.func.value
        if self.shadowed(callee):
            return None
        if callee in (self.compiled_here() if names is None else names):
            entry = self.compiled_entry(callee)
        else:
            entry = compiled_parameter(self, callee)     # a compiled callable every caller hands in
            if entry is None:
                return None
        calls = self.ctx.analysis(analysis, callee, entry, self._local_span(callee)) if entry else []
        here = self.ctx.position(node)[:2]
        mine = next((found for ln, col, found in calls if (ln, col) == here), None)
        return callee, entry, here, mine or {}, calls

    def compiled_method(self, node: cst.Call) -> Optional[str]:
        """`Cls.m` for a call of a compiled method (`@torch.compile` on it, or `self.m = torch.compile(self.m)`:
        `regions.compiled_methods`; or an attribute holding it, `self.fwd = torch.compile(self.m)`) of a class `Cls`
        of this file: `self.m(...)` in a method of `Cls`, or
        `buf.m(...)` where `buf = Cls(...)` in the calling function or at the module level (or `buf.m` is rebound
        there to its compiled self)."""
        f, ix = node.func, self.ctx.index
        if not (isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name)) or ix is None:
            return None
        here = ix.functions.get(self.ctx.qualname)
        if f.value.value == "self":
            classes = [here.cls] if here is not None and here.cls else []
        else:
            classes = having(ix, ix.built(f.value.value, here), f.attr.value)
        cls = classes[0] if len(classes) == 1 else ""
        q = compiled_attribute(ix, cls, f.attr.value, self.ctx.source) if cls else None
        rebound = f"{f.value.value}.{f.attr.value}" in self.compiled_names()    # `agent.act = torch.compile(...)`
        return q or (f"{cls}.{f.attr.value}" if rebound and f"{cls}.{f.attr.value}" in ix.functions else None)

    def shadowed(self, name: str) -> bool:
        """The function being checked defines `name` as a nested function that is not compiled (a test's own
        eager `def fn`, while another test's `fn` is compiled): its calls here run that one."""
        ix = self.ctx.index
        here = ix.functions.get(self.ctx.qualname or "") if ix is not None else None
        nested = ix.functions.get(f"{self.ctx.qualname}.{name}") if here is not None else None
        return nested is not None and not _decorated_compile(ix, f"{self.ctx.qualname}.{name}") and \
            compile_call(self.ctx, name) is None

    def through_caller(self, node: cst.Call, entry: Optional[str], analysis):
        """(the entry's parameter, what `analysis` found for it at each call of the calling function, in order)
        for each argument of the compiled call `node` that is a parameter of the calling function (a top-level
        function of the file) handed on unchanged: the values its callers pass flow through it (`run(batch,
        "nhwc")`, `run(batch, "nchw")` -> `preprocess(batch, layout)`)."""
        from dynlint.rules.recompiles.handed import rebound_in
        ix = self.ctx.index
        info = ix.functions.get(entry or "") if ix is not None else None
        caller = self.ctx.qualname if ix is not None and self.ctx.qualname in ix.functions else None
        if info is None or caller is None or "." in caller:
            return
        for arg in node.args:
            param = bound_parameter(info, node, arg)
            if not (isinstance(arg.value, cst.Name) and param) or arg.value.value in rebound_in(self.ctx, caller):
                continue
            passed = [(ln, col, b[arg.value.value]) for ln, col, b in
                      self.ctx.analysis(analysis, caller, caller) if arg.value.value in b]
            if len(passed) > 1:
                yield param, passed

    def _local_span(self, name: str) -> Optional[Tuple[int, int]]:
        """The lines of the function being visited when it binds `name` to a compiled function itself (`opt =
        torch.compile(fn)` in each of several test functions): only its calls call that one."""
        ix = self.ctx.index
        here = ix.functions.get(self.ctx.qualname or "") if ix is not None else None
        scope = guard_lines.function_at(self.ctx.source or "", here.def_line) if here is not None else None
        own = scope is not None and any(isinstance(n, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in n.targets) for n in ast.walk(scope))
        return (here.start, here.end) if own else None

    def reads(self, function: Optional[str], value: Optional[str]) -> bool:
        """Does the traced code read `value`? Dynamo guards only what it reads: an argument the compiled function
        never uses is not guarded, whatever its calls pass. True when not known here (`function` not in this
        file, or no value named)."""
        ix = self.ctx.index
        info = ix.functions.get(function) if ix is not None and function else None
        fn = guard_lines.function_at(self.ctx.source or "", info.def_line) if info is not None else None
        return fn is None or not value or guard_lines.guard_read(self.ctx.source or "", fn, value) is not None

    def report_at_guard(self, node: cst.CSTNode, function: Optional[str], guarded: Optional[str],
                        changed: str = CHANGES, message: Optional[str] = None, at_entry: bool = True,
                        also: Sequence[Tuple[int, int, str]] = (), **fmt) -> None:
        """Report at the guard (`guard_span`), with `node`, the code that changes the value, as a related
        location; at `node` itself when the guarded function is not in this file (a library whose users call
        it: the change is all there is to show)."""
        span = self.guard_span(function, guarded, at_entry) if function else None
        if span is None:
            self.report(node, message, **fmt)
            return
        line, col = self.ctx.position(node)[:2]
        info = self.ctx.index.functions.get(function) if guarded and self.ctx.index is not None else None
        self.ctx.report(self, node, message or self.format_message(**fmt), at=span,
                        related=[(line, col, changed), *also], guard=(info.def_line, guarded) if info else ())

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._assigned: List[Tuple[str, cst.BaseExpression]] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        # seen in source order, before the uses that ask about them
        for t in node.targets:
            if isinstance(t.target, cst.Name):
                self._assigned.append((t.target.value, node.value))
            self._assigned += _parallel(t.target, node.value)


    def assignments(self) -> List[Tuple[str, cst.BaseExpression]]:
        return self._assigned

    def compiled_here(self) -> Set[str]:
        """Compiled names, plus the modules handed to torch.compile in this statement (`cm =
        torch.compile(model)`: both `cm` and `model` are the compiled module)."""
        names = set(self.compiled_names())
        for target, value in self.assignments():
            if _is_compile_call(self, value):
                names.add(target)
                if value.args and isinstance(value.args[0].value, cst.Name):
                    names.add(value.args[0].value.value)
        return names

    def module_classes(self, name: str):
        """Project classes a local/module name was built from (following `torch.compile(...)`)."""
        project, ix = self.ctx.project, self.ctx.index
        if not project or not ix:
            return []
        ctors = list(ix.module_instances.get(name, []))
        for fn in ix.functions.values():
            ctors += fn.instances.get(name, [])
        for target, value in self.assignments():
            if target == name and _is_compile_call(self, value) and value.args:
                inner = value.args[0].value
                if isinstance(inner, cst.Name) and inner.value != name:
                    ctors += [c for c in self.module_classes_ctors(inner.value)]
                elif isinstance(inner, cst.Call):
                    ctors.append(self.ctx.qualify(inner.func) or "")
        out = []
        for c in ctors:
            if not c or c.split(".")[-1][:1].islower():
                continue
            r = project.resolve(ix, c)
            if r and r[0] == "class":
                out.append(r[1])
        return out

    def module_classes_ctors(self, name: str) -> List[str]:
        ix = self.ctx.index
        ctors = list(ix.module_instances.get(name, []))
        for fn in ix.functions.values():
            ctors += fn.instances.get(name, [])
        for target, value in self.assignments():
            if target == name and isinstance(value, cst.Call):
                ctors.append(self.ctx.qualify(value.func) or "")
        return ctors


def literal_value(node: Optional[ast.expr]):
    """The value of a literal number, string or bool (`-1` included), or a tuple of them; None for anything
    else."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        value = node.operand.value
        return -value if type(value) in (int, float) else None
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, str, bool):
        return node.value
    if isinstance(node, ast.Tuple) and node.elts:       # Dynamo guards each item: `box[0] == 1`
        items = tuple(literal_value(e) for e in node.elts)
        return items if all(isinstance(i, (int, float, str)) for i in items) else None
    return None


def forwarded_keywords(ctx, caller: str, info, call: cst.Call) -> dict:
    """{parameter of the compiled function `info`: [(line, column, constant)]} for a `call` of it that hands on
    the calling function's `**kwargs` (`sample_next(logits, **sampling)` in `generate(..., **sampling)`): per
    call of the caller in the file, the constant it passes for that keyword, or the compiled function's default
    where it passes none. Parameters the call binds itself are left out."""
    source = ctx.source or ""
    star = next((a.value for a in call.args if a.star == "**"), None)
    outer = guard_lines.function_at(source, ctx.index.functions[caller].def_line)
    inner = guard_lines.function_at(source, info.def_line)
    tree = guard_lines.parsed(source)
    if not isinstance(star, cst.Name) or outer is None or inner is None or tree is None or \
            outer.args.kwarg is None or outer.args.kwarg.arg != star.value:
        return {}
    taken = {p.arg for p in list(outer.args.posonlyargs) + list(outer.args.args) + list(outer.args.kwonlyargs)}
    params = [p.arg for p in list(inner.args.posonlyargs) + list(inner.args.args) + list(inner.args.kwonlyargs)]
    bound = {bound_parameter(info, call, a) for a in call.args if not a.star}
    defaults = defaults_of(inner.args)
    lines = source.splitlines()
    out: dict = {}
    for c in sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and
                     n.func.id == outer.name and all(k.arg for k in n.keywords)), key=lambda n: (n.lineno, n.col_offset)):
        given = {k.arg: k.value for k in c.keywords}
        for p in params:
            if p in bound or p in taken or (p not in given and p not in defaults):
                continue
            value = literal_value(given.get(p, defaults.get(p)))
            if value is not None:
                out.setdefault(p, []).append((c.lineno, guard_lines.column(lines, c.lineno, c.col_offset), value))
    return out


def _parallel(target: cst.BaseExpression, value: cst.BaseExpression) -> List[Tuple[str, cst.BaseExpression]]:
    """(name, value) for each name of a parallel assignment (`g, d = torch.compile(g), torch.compile(d)`)."""
    if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(value, (cst.Tuple, cst.List)) or \
            len(target.elements) != len(value.elements) or \
            any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)):
        return []
    return [(t.value.value, v.value) for t, v in zip(target.elements, value.elements) if isinstance(t.value, cst.Name)]


def grad_off_around(tree: ast.Module, call: ast.Call, qualify, setters=GRAD_OFF) -> bool:
    """`call` stands inside a `with` whose context manager is one of `setters` (by qualified name: turns grad mode
    off, `torch.no_grad()`), or in a function decorated with one."""
    for scope in ast.walk(tree):
        heads = [i.context_expr for i in scope.items] if isinstance(scope, ast.With) else \
            scope.decorator_list if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
        if any(qualify(guard_lines.dotted(h.func if isinstance(h, ast.Call) else h) or "") in setters
               for h in heads) and any(n is call for n in ast.walk(scope)):
            return True
    return False
