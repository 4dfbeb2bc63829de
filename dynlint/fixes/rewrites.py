"""Building blocks of the automatic fixes (`dynlint check --fix`): the torch knowledge they share.

A rule's `autofix(node)` returns an `Autofix`: libcst nodes of the code being checked and what replaces them.
The walker turns it into file edits (dynlint/core/walker.py `render_fix`) and the fixer applies them to the
whole file (dynlint/core/fixer.py), which knows nothing of torch. The questions a fix must answer before it
may call itself safe live here, once: is an expression free of side effects, is a condition a 0-d tensor, is
an arm of a branch a shape- and dtype-keeping function of one tensor, how is `torch` spelt in this file.
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import libcst as cst
from libcst.helpers import parse_template_expression
from libcst.metadata import MetadataWrapper, PositionProvider

from dynlint.analysis.aliasing import (
    VIEWS,
    handed_on,
    may_alias,
    name_escapes,
    nodes,
    occurrences,
    parent_map,
    value_before,
)
from dynlint.analysis.names import COMPILING_TRUE
from dynlint.analysis.tensors import (
    FLOAT_IF_TENSOR,
    FLOAT_TENSOR,
    TENSOR,
    TENSOR_METHODS,
    VALUE,
    WEAK,
    Tensors,
    float_literal,
    parse_lines,
)
from dynlint.core.finding import Edit

SAFE, UNSAFE = "safe", "unsafe"


@dataclass(frozen=True)
class Autofix:
    title: str
    safety: str                                          # SAFE | UNSAFE
    edits: Tuple[Tuple[cst.CSTNode, object], ...]       # (node of the unit, replacement node or [statements])
    imports: Tuple[Tuple[str, str], ...] = ()
    file_edits: Tuple[Edit, ...] = ()                    # edits outside the unit, in file coordinates


# ---- names -------------------------------------------------------------------------------------------------
def torch_name(ctx) -> str:
    """How this file spells the `torch` module (`import torch as th` -> "th"); "torch" when nothing binds it
    (the fix then asks the fixer to add `import torch`)."""
    imports = getattr(ctx.index, "imports", None) or {}
    if imports.get("torch") == "torch":
        return "torch"
    return next((local for local, target in sorted(imports.items()) if target == "torch"), "torch")


def torch_imports(ctx) -> Tuple[Tuple[str, str], ...]:
    return (("torch", torch_name(ctx)),)


def code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def expr(template: str, **parts: cst.BaseExpression) -> cst.BaseExpression:
    """`expr("{t}.where({c}, {a}, {b})", t=..., ...)`: parts may be nodes or source text."""
    nodes = {k: cst.parse_expression(v) if isinstance(v, str) else strip_parens(v) for k, v in parts.items()}
    return parse_template_expression(template, **nodes)


def strip_parens(node: cst.BaseExpression) -> cst.BaseExpression:
    """Without its own parentheses, for use as a call argument (a tuple or generator keeps them)."""
    if not getattr(node, "lpar", None) or isinstance(node, (cst.Tuple, cst.GeneratorExp, cst.Yield)):
        return node
    return node.with_changes(lpar=(), rpar=())


def atom(node: cst.BaseExpression) -> cst.BaseExpression:
    """`node`, parenthesised where it is the receiver of a method call (`(a + b).float()`, `(1).float()`)."""
    if isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString)) or \
            getattr(node, "lpar", None):
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def is_compiling_test(t: str, negated: bool) -> cst.BaseExpression:
    return cst.parse_expression(f"{'not ' if negated else ''}{t}.compiler.is_compiling()")


# ---- statements --------------------------------------------------------------------------------------------
def standalone_statement(ctx, node: cst.CSTNode) -> Optional[cst.SimpleStatementLine]:
    """The statement line whose only statement is the expression `node` (`print(x)` on a line of its own), when
    that line stands in an indented block or at module level (so an `if` can replace it)."""
    parents = ctx.parents
    if len(parents) < 3 or not isinstance(parents[-1], cst.Expr) or parents[-1].value is not node:
        return None
    line = parents[-2]
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    return line if isinstance(parents[-3], (cst.IndentedBlock, cst.Module)) else None


def eager_only(stmt: cst.BaseStatement, t: str) -> cst.If:
    """`if not torch.compiler.is_compiling(): <stmt>`: runs eagerly, skipped (not traced) under Dynamo."""
    return cst.If(test=is_compiling_test(t, True), body=cst.IndentedBlock(body=[stmt.with_changes(leading_lines=())]))


def is_eager_only_block(node: cst.CSTNode, ctx) -> bool:
    """`if not torch.compiler.is_compiling(): ...` without an else."""
    if not isinstance(node, cst.If) or node.orelse is not None:
        return False
    test = node.test
    if not (isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)):
        return False
    inner = test.expression
    return isinstance(inner, cst.Call) and not inner.args and (ctx.qualify(inner.func) or "") in COMPILING_TRUE


def statement_parent_ok(parents: Sequence[cst.CSTNode], index: int) -> bool:
    """parents[index] is a statement of an indented block or of the module (not an `elif`)."""
    return index >= 1 and isinstance(parents[index - 1], (cst.IndentedBlock, cst.Module))


# ---- purity ------------------------------------------------------------------------------------------------
PURE_BUILTINS = frozenset({"len", "str", "repr", "format", "tuple", "list", "dict", "set", "frozenset", "int",
                           "float", "bool", "round", "abs", "min", "max", "sum", "sorted", "type", "id",
                           "isinstance", "hasattr", "getattr", "any", "all", "range", "enumerate", "zip",
                           "reversed", "divmod", "pow", "hash", "callable", "chr", "ord", "hex", "bin"})
PURE_FUNCTIONS = frozenset({"time.time", "time.perf_counter", "time.monotonic", "time.process_time",
                            "time.time_ns", "time.perf_counter_ns", "os.getpid", "os.environ.get", "os.getenv",
                            "os.path.join", "os.path.basename", "json.dumps"})
PURE_PREFIXES = ("math.", "operator.")
IMPURE_TORCH = frozenset({"torch.manual_seed", "torch.seed", "torch.save", "torch.load", "torch.set_rng_state",
                          "torch.set_default_dtype", "torch.set_default_device", "torch.set_printoptions",
                          "torch.set_grad_enabled", "torch.use_deterministic_algorithms", "torch.cuda.synchronize",
                          "torch.cuda.manual_seed", "torch.cuda.manual_seed_all", "torch.cuda.empty_cache"})
MUTATING_METHODS = frozenset({"append", "extend", "insert", "pop", "popleft", "appendleft", "update", "setdefault",
                              "add", "clear", "remove", "discard", "popitem", "write", "writelines", "send", "close",
                              "flush", "step", "backward", "zero_grad", "register_buffer", "register_parameter",
                              "put", "put_nowait", "get", "get_nowait", "set", "reset", "seed", "manual_seed",
                              "sort", "reverse", "__setitem__", "__delitem__", "train", "eval", "apply", "to_",
                              "next", "__next__", "read", "readline"})
# Random draws: skipping one (or drawing twice) changes every later random number.
RANDOM = frozenset({"rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "bernoulli",
                    "multinomial", "normal", "poisson", "dropout", "dropout1d", "dropout2d", "dropout3d",
                    "alpha_dropout", "feature_alpha_dropout", "rrelu", "gumbel_softmax", "sample", "rsample",
                    "random", "uniform", "choice", "shuffle"})
SIDE_EFFECT_METHODS = frozenset({"register_hook", "retain_grad", "record_stream", "register_forward_hook",
                                 "register_forward_pre_hook", "register_full_backward_hook"})
STRING_METHODS = frozenset({"format", "join", "upper", "lower", "strip", "split", "replace", "startswith",
                            "endswith", "rjust", "ljust", "center", "zfill"})


def is_pure(ctx, node: cst.CSTNode) -> bool:
    """Evaluating `node` has no side effect a reader would miss if it were skipped or run twice: names,
    attributes, literals, operators, f-strings, tensor methods that are not in-place, `torch.*` / `math.*`
    functions and a few builtins and clock reads. Calls of user functions are not (they may do anything)."""
    tensors = Tensors.of(ctx)
    for n in nodes(node):
        if isinstance(n, (cst.Lambda, cst.Yield, cst.Await, cst.NamedExpr)):
            return False
        if isinstance(n, cst.Call) and not _pure_call(ctx, tensors, n):
            return False
    return True


def _pure_call(ctx, tensors: Tensors, call: cst.Call) -> bool:
    func = call.func
    q = ctx.qualify(func) or ""
    if q.rsplit(".", 1)[-1] in RANDOM or q.rsplit(".", 1)[-1] in SIDE_EFFECT_METHODS:
        return False
    if isinstance(func, cst.Name):
        return q in PURE_BUILTINS or q in PURE_FUNCTIONS or q.startswith(PURE_PREFIXES) or \
            (q.startswith("torch.") and q not in IMPURE_TORCH and not q.endswith("_"))
    if not isinstance(func, cst.Attribute):
        return False
    method = func.attr.value
    if q in PURE_FUNCTIONS or q.startswith(PURE_PREFIXES):
        return True
    if q.startswith("torch."):
        return q not in IMPURE_TORCH and not method.endswith("_")
    if method in MUTATING_METHODS or (method.endswith("_") and not method.endswith("__")):
        return False
    recv = func.value
    if isinstance(recv, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return method in STRING_METHODS
    return tensors.kind(recv) in (TENSOR, WEAK) or method in TENSOR_METHODS


# ---- tensor conditions -------------------------------------------------------------------------------------
ELEMENTWISE = frozenset({"isnan", "isinf", "isfinite", "isposinf", "isneginf", "logical_not", "abs", "neg", "bool",
                         "float", "double", "half", "long", "int", "sign", "signbit", "sqrt", "exp", "log",
                         "clone", "detach", "nan_to_num", "clamp", "clip", "round", "floor", "ceil"})


def zero_dim(ctx, node: cst.CSTNode, depth: int = 0) -> bool:
    """`node` is provably a 0-d tensor (or a comparison / logic of 0-d tensors and numbers): `x.any()`,
    `y.sum() > 0`, `torch.isfinite(loss.mean())`."""
    tensors = Tensors.of(ctx)
    if depth > 8:
        return False
    if tensors.is_scalar(node):
        return True
    if isinstance(node, cst.Call):
        q = ctx.qualify(node.func) or ""
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if isinstance(node.func, cst.Attribute) and not q.startswith("torch."):
            m, recv = node.func.attr.value, node.func.value
            if m in ("any", "all") and not node.args and tensors.kind(recv) in (TENSOR, WEAK):
                return True
            return m in ELEMENTWISE and zero_dim(ctx, recv, depth + 1)
        if q.startswith("torch.") and q[6:] in ("any", "all") and len(node.args) == 1:
            return True
        return q.startswith("torch.") and q[6:] in ELEMENTWISE and bool(positional) and \
            zero_dim(ctx, positional[0], depth + 1)
    if isinstance(node, (cst.Comparison, cst.BinaryOperation)):
        sides = [node.left] + ([c.comparator for c in node.comparisons] if isinstance(node, cst.Comparison)
                               else [node.right])
        flags = [zero_dim(ctx, s, depth + 1) for s in sides]
        return any(flags) and all(f or tensors.kind(s) == VALUE for f, s in zip(flags, sides))
    if isinstance(node, cst.UnaryOperation):
        return zero_dim(ctx, node.expression, depth + 1)
    if isinstance(node, cst.BooleanOperation):
        return zero_dim(ctx, node.left, depth + 1) and zero_dim(ctx, node.right, depth + 1)
    if isinstance(node, cst.Name):
        values = tensors.assigned_values(node.value)
        return bool(values) and all(zero_dim(ctx, v, depth + 1) for v in values)
    return False


def bool_tensor(ctx, cond: cst.BaseExpression, t: str) -> Optional[cst.BaseExpression]:
    """A boolean-tensor expression with the truth value Python gives `cond` (`not a` -> `torch.logical_not(a)`,
    `a and b` -> `torch.logical_and(a, b)`, `y.sum()` -> `y.sum().bool()`); None when a part is not a tensor."""
    tensors = Tensors.of(ctx)
    if isinstance(cond, cst.UnaryOperation) and isinstance(cond.operator, cst.Not):
        inner = bool_tensor(ctx, cond.expression, t)
        return expr(f"{t}.logical_not({{a}})", a=inner) if inner is not None else None
    if isinstance(cond, cst.BooleanOperation):
        left, right = bool_tensor(ctx, cond.left, t), bool_tensor(ctx, cond.right, t)
        if left is None or right is None:
            return None
        fn = "logical_and" if isinstance(cond.operator, cst.And) else "logical_or"
        return expr(f"{t}.{fn}({{a}}, {{b}})", a=left, b=right)
    if tensors.kind(cond) != TENSOR:
        return None
    if tensors.is_bool(cond) or _any_all(ctx, cond):
        return strip_parens(cond)
    return cst.Call(func=cst.Attribute(value=atom(cond), attr=cst.Name("bool")))


def _any_all(ctx, node: cst.CSTNode) -> bool:
    """`t.any()`, `t.all(dim=...)`, `torch.any(t)`: boolean tensors."""
    if not isinstance(node, cst.Call):
        return False
    q = ctx.qualify(node.func) or ""
    if q in ("torch.any", "torch.all"):
        return True
    return isinstance(node.func, cst.Attribute) and node.func.attr.value in ("any", "all") and \
        not q.startswith("torch.")          # called on a tensor condition: bool_tensor checked it is one


# ---- branches as torch.where -----------------------------------------------------------------------------
SHAPE_KEEPING_METHODS = frozenset({"nan_to_num", "clamp", "clip", "clamp_min", "clamp_max", "abs", "neg", "relu",
                                   "clone", "detach", "contiguous", "square"})
SHAPE_KEEPING_FUNCS = frozenset({"nan_to_num", "clamp", "clip", "clamp_min", "clamp_max", "abs", "neg", "relu",
                                 "zeros_like", "ones_like", "full_like", "square"})
ARITH = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)


def _number(node: cst.CSTNode) -> bool:
    if isinstance(node, (cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return _number(node.expression)
    # float("inf"), float("-inf"), float("nan")
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "float" and \
        len(node.args) == 1 and isinstance(node.args[0].value, cst.SimpleString)


def _finite_number(node: cst.CSTNode, nonzero: bool = False) -> bool:
    """A finite numeric literal (`2`, `-0.5`, `1e-6`), nonzero if asked."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return _finite_number(node.expression, nonzero)
    if isinstance(node, (cst.Integer, cst.Float)):
        try:
            return not nonzero or float(node.evaluated_value) != 0
        except (ValueError, OverflowError):
            return False
    return False


def simple_arm(ctx, node: cst.CSTNode, base: str) -> bool:
    """`node` keeps the shape of the tensor named `base` and is computed from it elementwise with numbers
    only: `base`, `base * 0.5`, `base + 1e-6`, `base.nan_to_num()`, `torch.clamp(base, min=0)`,
    `torch.zeros_like(base)`. Its derivative is finite everywhere (no `1 / base`, no `base * inf`): the arm
    torch.where does not select still gets a zero gradient, and 0 * inf would make that gradient NaN."""
    if isinstance(node, cst.Name):
        return node.value == base
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, ARITH):
        l, r = node.left, node.right
        if isinstance(node.operator, cst.Divide):
            return simple_arm(ctx, l, base) and _finite_number(r, nonzero=True)
        number = _finite_number if isinstance(node.operator, cst.Multiply) else _number
        return (simple_arm(ctx, l, base) and (number(r) or simple_arm(ctx, r, base))) or \
            (number(l) and simple_arm(ctx, r, base))
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return simple_arm(ctx, node.expression, base)
    if isinstance(node, cst.Call):
        rest = [a.value for a in node.args]
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in SHAPE_KEEPING_METHODS and \
                not (ctx.qualify(node.func) or "").startswith("torch."):
            return simple_arm(ctx, node.func.value, base) and all(_number(a) for a in rest)
        q = ctx.qualify(node.func) or ""
        if q.startswith("torch.") and q[6:] in SHAPE_KEEPING_FUNCS and rest:
            return simple_arm(ctx, rest[0], base) and all(_number(a) for a in rest[1:]) and \
                all(not a.star for a in node.args)
    return False


def _assignment(stmt: cst.CSTNode) -> Optional[Tuple[str, cst.BaseExpression, cst.SimpleStatementLine]]:
    """(name, value, line) for a line `name = value` or `name op= value` (as `name = name op value`)."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    s = stmt.body[0]
    if isinstance(s, cst.Assign) and len(s.targets) == 1 and isinstance(s.targets[0].target, cst.Name):
        return s.targets[0].target.value, s.value, stmt
    if isinstance(s, cst.AugAssign) and isinstance(s.target, cst.Name) and \
            isinstance(s.operator, (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign)):
        op = {cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
              cst.DivideAssign: cst.Divide}[type(s.operator)]()
        return s.target.value, cst.BinaryOperation(left=s.target, operator=op, right=atom(s.value)), stmt
    return None


def branch_to_where(ctx, if_node: cst.If, cond: cst.BaseExpression, parents_index: int) -> Optional[Autofix]:
    """`if cond: name = a [else: name = b]` -> `name = torch.where(cond, a, b)` (b defaults to `name`).
    Statements of the arms that only run eagerly (`if not torch.compiler.is_compiling(): ...`) are kept, under
    one eager-only `if cond:` placed before. Safe under `where_is_safe` (a 0-d condition; both arms elementwise
    functions of the tensor `name` with numbers, of one dtype; a new tensor in `name` that the caller cannot
    tell from the one it held), and when no arm updates in place (`name += v`) a tensor seen elsewhere;
    otherwise unsafe."""
    tensors = Tensors.of(ctx)
    if not statement_parent_ok(ctx.parents, parents_index) or not isinstance(if_node.body, cst.IndentedBlock):
        return None
    if if_node.orelse is not None and not isinstance(if_node.orelse, cst.Else):
        return None                     # elif chains: not handled
    arms = [if_node.body] + ([if_node.orelse.body] if if_node.orelse is not None else [])
    eager: List[List[cst.BaseStatement]] = []
    assigns = []
    for arm in arms:
        if not isinstance(arm, cst.IndentedBlock):
            return None
        kept, found = [], []
        for stmt in arm.body:
            if is_eager_only_block(stmt, ctx) and not found:     # eager-only output before the assignment
                kept.append(stmt)
            else:
                found.append(stmt)
        if len(found) != 1 or _assignment(found[0]) is None:
            return None
        eager.append(kept)
        assigns.append(_assignment(found[0]))
    name = assigns[0][0]
    if any(a[0] != name for a in assigns):
        return None
    t = torch_name(ctx)
    test = bool_tensor(ctx, cond, t)
    if test is None or not is_pure(ctx, cond):
        return None
    taken = assigns[0][1]
    other = assigns[1][1] if len(assigns) == 2 else cst.Name(name)
    if len(assigns) == 1 and tensors.kind(cst.Name(name)) not in (TENSOR, WEAK):
        return None                     # `name` must already hold a tensor when the branch is not taken
    if not all(tensors.kind(v) in (TENSOR, WEAK) or simple_arm(ctx, v, name) for v in (taken, other)):
        return None
    # the arm not taken handed on `name` as it was: the value it last got in this block, if known
    before = value_before(ctx.parents[parents_index - 1].body, if_node, name) if len(assigns) == 1 else None
    held = (taken, other if len(assigns) == 2 else before if before is not None else cst.Name(name))
    seen = name_escapes(ctx, name, if_node, ctx.parents[:parents_index], before=False)
    safe = where_is_safe(ctx, cond, taken, other, name, held, seen) and \
        not (any(_in_place(a[2]) for a in assigns) and _update_hidden(ctx, name, if_node, parents_index))
    if safe or all(is_pure(ctx, v) for v in (taken, other)):
        value = expr(f"{t}.where({{c}}, {{a}}, {{b}})", c=test, a=taken, b=other)
        title = f"Select with `{t}.where` instead of branching"
    elif zero_dim(ctx, cond):
        # arms that call user code (a submodule): run only the chosen one, in the graph, with torch.cond
        value = expr(f"{t}.cond({{c}}, lambda: {{a}}, lambda: {{b}})", c=test, a=_fresh(taken), b=_fresh(other))
        title = f"Branch inside the graph with `{t}.cond`"
    else:
        return None
    line = assigns[0][2]
    comment = line.trailing_whitespace if line.trailing_whitespace.comment else if_node.body.header
    new_line = cst.SimpleStatementLine(
        body=[cst.Assign(targets=[cst.AssignTarget(target=cst.Name(name))], value=value)],
        trailing_whitespace=comment)
    out: List[cst.BaseStatement] = []
    stmts = [[s for blk in arm for s in blk.body.body] for arm in eager] + [[]]
    if stmts[0] or stmts[1]:
        if stmts[0]:
            inner_if = cst.If(test=cond, body=cst.IndentedBlock(body=stmts[0]),
                              orelse=cst.Else(body=cst.IndentedBlock(body=stmts[1])) if stmts[1] else None)
        else:                           # only the else arm has eager-only output
            inner_if = cst.If(test=cst.UnaryOperation(operator=cst.Not(), expression=atom(cond)),
                              body=cst.IndentedBlock(body=stmts[1]))
        out.append(cst.If(test=is_compiling_test(t, True), body=cst.IndentedBlock(body=[inner_if])))
    out.append(new_line)
    return Autofix(title, SAFE if safe else UNSAFE, ((if_node, out),), torch_imports(ctx))


def _fresh(node: cst.BaseExpression) -> cst.BaseExpression:
    """A `torch.cond` branch may not return (a view of) one of its inputs: `.clone()` what could be one."""
    view = isinstance(node, (cst.Name, cst.Attribute, cst.Subscript)) or (
        isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in VIEWS)
    return cst.Call(func=cst.Attribute(value=atom(node), attr=cst.Name("clone"))) if view else node


def ifexp_to_where(ctx, node: cst.IfExp) -> Optional[Autofix]:
    """`a if cond else b` -> `torch.where(cond, a, b)`; safe under `where_is_safe` (both arms simple functions
    of one tensor, of one dtype; the new tensor not seen where the caller could tell it from `a` or `b`)."""
    tensors = Tensors.of(ctx)
    t = torch_name(ctx)
    test = bool_tensor(ctx, node.test, t)
    if test is None or not is_pure(ctx, node.test):
        return None
    a, b = node.body, node.orelse
    if tensors.kind(a) != TENSOR and tensors.kind(b) != TENSOR:
        return None
    bases = sorted(_names(a) | _names(b))
    simple = zero_dim(ctx, node.test) and any(simple_arm(ctx, a, n) and simple_arm(ctx, b, n) for n in bases)
    if not simple and not (is_pure(ctx, a) and is_pure(ctx, b) and tensors.kind(a) == tensors.kind(b) == TENSOR):
        return None
    fn = next((f for f in reversed(ctx.functions) if isinstance(f, cst.FunctionDef)), None)
    seen = fn is None or handed_on(ctx, node, parent_map(fn))
    safe = simple and any(where_is_safe(ctx, node.test, a, b, n, (a, b), seen) for n in bases)
    value = expr(f"{t}.where({{c}}, {{a}}, {{b}})", c=test, a=a, b=b)
    value = value.with_changes(lpar=node.lpar, rpar=node.rpar)
    return Autofix(f"Select with `{t}.where` instead of a conditional expression", SAFE if safe else UNSAFE,
                   ((node, value),), torch_imports(ctx))


def _return_value(stmt: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """The value of a line `return value` (None for anything else, a bare `return` included)."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Return):
        return stmt.body[0].value
    return None


def _eager_prefix(ctx, body: Sequence[cst.BaseStatement]):
    """(eager-only blocks at the start of `body`, the statements after them)."""
    body = list(body)
    n = 0
    while n < len(body) and is_eager_only_block(body[n], ctx):
        n += 1
    return body[:n], body[n:]


def early_return_to_where(ctx, if_node: cst.If, parents_index: int) -> Optional[Autofix]:
    """An early return on a tensor condition, as one `torch.where`:

        if cond:                      ->   return torch.where(cond, a, b)
            return a
        return b                      (also `else: return b`)

        if cond:                      ->   name = torch.where(cond, name, v)
            return e                       return e
        name = v
        return e                      (the same `e`: the early return skips only the update of `name`)

    Safe under the conditions of the branch fix (`where_is_safe`): the condition is a 0-d tensor, and the
    selected values are elementwise functions of one tensor with numbers (`y * 0.5`, `y.clamp(min=0)`; see
    `simple_arm`) of one dtype, so both computing them always and selecting keeps values, dtype, shape and
    gradients; and the caller cannot get back a tensor it holds (a parameter, an attribute, a view) where it
    used to (nor miss an in-place update, `y += v`, of one). Other side-effect-free tensor values
    give an unsafe fix, as does a fall-through with more statements before `return b` (they then always run:
    `if cond: return a`, `loss = f(...)`, `return loss` -> `loss = f(...)`, `return torch.where(cond, a,
    loss)`). Eager-only output in the `if` (`if not torch.compiler.is_compiling(): ...`) stays, under its own
    `if cond:`."""
    tensors = Tensors.of(ctx)
    parents = ctx.parents
    if not statement_parent_ok(parents, parents_index) or \
            not isinstance(parents[parents_index - 1], cst.IndentedBlock) or not isinstance(if_node.body, cst.IndentedBlock):
        return None
    eager, rest = _eager_prefix(ctx, if_node.body.body)
    if len(rest) != 1 or _return_value(rest[0]) is None:
        return None
    taken, taken_line = _return_value(rest[0]), rest[0]
    cond = if_node.test
    t = torch_name(ctx)
    test = bool_tensor(ctx, cond, t)
    if test is None or not is_pure(ctx, cond):
        return None
    block = parents[parents_index - 1].body
    at = next((i for i, s in enumerate(block) if s is if_node), None)
    if at is None:
        return None
    following = list(block[at + 1:])
    if isinstance(if_node.orelse, cst.Else):
        if not isinstance(if_node.orelse.body, cst.IndentedBlock) or len(if_node.orelse.body.body) != 1:
            return None
        following, consumed_from = [if_node.orelse.body.body[0]], False
    elif if_node.orelse is not None:
        return None                                         # elif chains: not handled
    else:
        consumed_from = True
    # the fall-through: assignments, then `return b`
    k = 0
    while k < len(following) and k < 6 and _assignment(following[k]) is not None:
        k += 1
    if k >= len(following) or _return_value(following[k]) is None:
        return None
    other, other_line = _return_value(following[k]), following[k]
    assigns = [_assignment(s) for s in following[:k]]
    kept: List[cst.BaseStatement] = []
    if eager:
        kept.append(cst.If(test=is_compiling_test(t, True), body=cst.IndentedBlock(body=[
            cst.If(test=cond, body=cst.IndentedBlock(body=[s for blk in eager for s in blk.body.body]))])))

    if k == 1 and code(taken).split() == code(other).split() and consumed_from:
        # `if cond: return e` / `name = v` / `return e`  ->  `name = torch.where(cond, name, v)` / `return e`
        name, value, line = assigns[0]
        if tensors.kind(cst.Name(name)) not in (TENSOR, WEAK) or \
                not (tensors.kind(value) in (TENSOR, WEAK) or simple_arm(ctx, value, name)) or not is_pure(ctx, value):
            return None
        safe = where_is_safe(ctx, cond, cst.Name(name), value, name, (taken,), True) and \
            not (_in_place(line) and _update_hidden(ctx, name, if_node, parents_index))
        new = cst.SimpleStatementLine(
            body=[cst.Assign(targets=[cst.AssignTarget(target=cst.Name(name))],
                             value=expr(f"{t}.where({{c}}, {{a}}, {{b}})", c=test, a=cst.Name(name), b=value))],
            trailing_whitespace=line.trailing_whitespace if line.trailing_whitespace.comment else if_node.body.header)
        return Autofix(f"Select with `{t}.where` instead of returning early", SAFE if safe else UNSAFE,
                       ((if_node, kept + [new]), (line, [])), torch_imports(ctx))

    if tensors.kind(taken) not in (TENSOR, WEAK) and tensors.kind(other) not in (TENSOR, WEAK):
        return None
    bases = sorted(_names(taken) | _names(other))
    simple = any(where_is_safe(ctx, cond, taken, other, n, (), False) for n in bases)  # values, dtype: kept
    safe = k == 0 and any(where_is_safe(ctx, cond, taken, other, n, (taken, other), True) for n in bases)
    if not simple and not (is_pure(ctx, taken) and is_pure(ctx, other) and
                           tensors.kind(taken) == tensors.kind(other) == TENSOR):
        return None
    if k:
        # the statements before `return b` now run first: they must not change what `cond` and `a` read
        if any(a[0] in _names(cond) | _names(taken) for a in assigns) or \
                not all(is_pure(ctx, a[1]) for a in assigns):
            return None
    comment = next((w for w in (other_line.trailing_whitespace, taken_line.trailing_whitespace, if_node.body.header)
                    if w.comment), other_line.trailing_whitespace)
    new = cst.SimpleStatementLine(body=[cst.Return(value=expr(f"{t}.where({{c}}, {{a}}, {{b}})", c=test, a=taken,
                                                                  b=other))], trailing_whitespace=comment)
    moved = [s.deep_clone() for s in following[:k]]
    edits = [(if_node, kept + moved + [new])]
    if consumed_from:
        edits += [(s, []) for s in following[:k + 1]]
    return Autofix(f"Select with `{t}.where` instead of returning early", SAFE if safe else UNSAFE, tuple(edits),
                   torch_imports(ctx))


def where_is_safe(ctx, cond: cst.BaseExpression, a: cst.BaseExpression, b: cst.BaseExpression, base: str,
                  held: Sequence[cst.BaseExpression], seen: bool) -> bool:
    """`torch.where(cond, a, b)` gives the caller exactly what branching between `a` and `b` gave, when:

    * `cond` is a 0-d tensor, and `a` and `b` are elementwise functions of the tensor `base` with numbers
      (`simple_arm`): shape kept, both cheap and harmless to compute, gradients finite;
    * `base` is evidently a tensor (a Python number would come back as a 0-d tensor);
    * `a` and `b` have one dtype (`_same_dtype`: an integer `x` in `x if c else x * 0.5` would become float;
      a floating `x`, `Tensors.floating`, stays what it is with any number);
    * the caller cannot tell the new tensor torch.where returns from what it got before: no value in `held`
      (what the branch handed on, as it was then) may be a tensor the caller holds, or the result is not
      `seen` as itself (returned, stored, updated in place...: `aliasing.handed_on`).

    The one test of the where-fixes (branch, conditional expression, early return)."""
    return zero_dim(ctx, cond) and simple_arm(ctx, a, base) and simple_arm(ctx, b, base) and \
        _evident_tensor(ctx, base, cond) and _same_dtype(ctx, a, b, base) and \
        not (seen and any(may_alias(ctx, v) for v in held))


def _update_hidden(ctx, name: str, if_node: cst.If, parents_index: int) -> bool:
    """An in-place update of `name` (`name += v`) that the fix turns into a new binding (`name =
    torch.where(...)`) would hide a change someone else sees: the tensor `name` holds before `if_node` may be
    the caller's (`may_alias`), or was handed on before (`z = name`)."""
    block = ctx.parents[parents_index - 1].body
    old = value_before(block, if_node, name)
    return may_alias(ctx, old if old is not None else cst.Name(name)) or \
        name_escapes(ctx, name, if_node, ctx.parents[:parents_index], before=True)


def _in_place(line: cst.SimpleStatementLine) -> bool:
    return isinstance(line.body[0], cst.AugAssign)


def _evident_tensor(ctx, name: str, cond: cst.CSTNode) -> bool:
    """`name` holds a tensor: inferred so, or probably so and read by the tensor condition (`y.sum() > 0`), or
    known to be a floating-point one (`emb = helper(t)` where the helper of this file returns `torch.cat` of
    `torch.cos(...)` ...: `Tensors.floating`)."""
    tensors = Tensors.strict_of(ctx)           # not by the guess that `forward`'s parameters are tensors
    kind = tensors.kind(cst.Name(name))
    return kind == TENSOR or (kind == WEAK and name in _names(cond)) or \
        tensors.floating(cst.Name(name)) == FLOAT_TENSOR


CLAMPS = frozenset({"clamp", "clip", "clamp_min", "clamp_max"})
KEEPS, INTEGER_ARITHMETIC, BRINGS_FLOAT = 0, 1, 2


def _promotion(ctx, arm: cst.CSTNode) -> int:
    """What a simple arm (`simple_arm`) does to its tensor's dtype: BRINGS_FLOAT with a float operand, a true
    division or a float bound of `clamp` (an integer tensor becomes float); INTEGER_ARITHMETIC with arithmetic
    on integers only, `square` included (a boolean tensor becomes int64); else KEEPS (`abs`, `zeros_like`, and
    the fill values of `nan_to_num` and `full_like`, which take the tensor's dtype)."""
    if isinstance(arm, cst.BinaryOperation):
        if isinstance(arm.operator, cst.Divide):
            return BRINGS_FLOAT
        return max([INTEGER_ARITHMETIC] + [BRINGS_FLOAT if float_literal(side) else _promotion(ctx, side)
                                           for side in (arm.left, arm.right)])
    if isinstance(arm, cst.UnaryOperation):
        return _promotion(ctx, arm.expression)
    if isinstance(arm, cst.Call):
        values = [a.value for a in arm.args]
        q = ctx.qualify(arm.func) or ""
        if isinstance(arm.func, cst.Attribute) and not q.startswith("torch."):
            fn, tensor, rest = arm.func.attr.value, arm.func.value, values
        else:
            fn, tensor, rest = q.rsplit(".", 1)[-1], (values[0] if values else None), values[1:]
        inner = _promotion(ctx, tensor) if tensor is not None else KEEPS
        if fn in CLAMPS and any(float_literal(v) for v in rest):
            return BRINGS_FLOAT
        return max(inner, INTEGER_ARITHMETIC) if fn == "square" else inner
    return KEEPS


def _same_dtype(ctx, a: cst.CSTNode, b: cst.CSTNode, base: str) -> bool:
    """Simple arms `a` and `b` of `base` have one dtype: both or neither bring in a float, and both or neither
    do integer arithmetic where `base` is a boolean mask; or `base` is known to be floating (`Tensors.floating`:
    then every arm keeps its dtype, a float number included). (`torch.where` of an integer and a float tensor is
    float: `x if c else x * 0.5` would turn an integer `x` into a float one.)"""
    pa, pb = _promotion(ctx, a), _promotion(ctx, b)
    if pa == pb or Tensors.of(ctx).floating(cst.Name(base)) >= FLOAT_IF_TENSOR:
        return True
    return max(pa, pb) < BRINGS_FLOAT and not Tensors.of(ctx).is_bool(cst.Name(base))


def _names(node: cst.CSTNode) -> set:
    return {n.value for n in nodes(node) if isinstance(n, cst.Name)}


def raise_guard_to_assert(ctx, if_node: cst.If, parents_index: int,
                          test: Optional[cst.BaseExpression] = None) -> Optional[Autofix]:
    """`if cond: raise E(msg)` -> an in-graph assertion while compiling, the original check when eager:

        if torch.compiler.is_compiling():
            torch._assert_async(torch.logical_not(cond), msg)
        elif cond:
            raise E(msg)

    Unsafe: under torch.compile a failing check raises RuntimeError instead of E, and on CUDA the assertion is
    asynchronous (a device-side assert). Python-valued parts of an `and` chain stay a Python `if`."""
    tensors = Tensors.of(ctx)
    body = if_node.body
    if if_node.orelse is not None or not statement_parent_ok(ctx.parents, parents_index) or \
            not isinstance(body, cst.IndentedBlock) or len(body.body) != 1:
        return None
    line = body.body[0]
    if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and isinstance(line.body[0], cst.Raise)):
        return None
    test = if_node.test if test is None else test
    if not is_pure(ctx, test):
        return None
    parts = []
    cond = test
    while isinstance(cond, cst.BooleanOperation) and isinstance(cond.operator, cst.And):
        parts.insert(0, cond.right)
        cond = cond.left
    parts.insert(0, cond)
    value_parts = [p for p in parts if tensors.kind(p) != TENSOR and not _tensor_logic(ctx, p)]
    tensor_parts = [p for p in parts if p not in value_parts]
    if not tensor_parts or any(tensors.kind(p) not in (VALUE,) for p in value_parts):
        return None
    t = torch_name(ctx)
    conds = [bool_tensor(ctx, p, t) for p in tensor_parts]
    if any(c is None for c in conds):
        return None
    failing = conds[0]
    for c in conds[1:]:
        failing = expr(f"{t}.logical_and({{a}}, {{b}})", a=failing, b=c)
    exc = line.body[0].exc
    message = None
    if isinstance(exc, cst.Call) and exc.args and isinstance(exc.args[0].value, cst.SimpleString):
        message = exc.args[0].value
    if message is None:
        message = cst.SimpleString(repr(f"{code(exc.func) if isinstance(exc, cst.Call) else code(exc)}: "
                                        f"{' '.join(code(test).split())}"))
    check = cst.SimpleStatementLine(body=[cst.Expr(expr(f"{t}._assert_async({t}.logical_not({{c}}), {{m}})",
                                                        c=failing, m=message))])
    compiled_body: cst.BaseStatement = check
    if value_parts:
        guard = value_parts[0]
        for p in value_parts[1:]:
            guard = cst.BooleanOperation(left=guard, operator=cst.And(), right=p)
        compiled_body = cst.If(test=guard, body=cst.IndentedBlock(body=[check]))
    new = cst.If(test=is_compiling_test(t, False), body=cst.IndentedBlock(body=[compiled_body]),
                 orelse=if_node.with_changes(leading_lines=()))
    return Autofix(f"Check with `{t}._assert_async` while compiling, raise when eager", UNSAFE,
                   ((if_node, [new]),), torch_imports(ctx))


def logic_to_tensor_ops(ctx, node: cst.BaseExpression, in_assert: bool) -> Optional[Autofix]:
    """`a and b` / `a or b` / `not a` on tensors -> `torch.logical_and(a, b)` / `logical_or` / `logical_not`.
    Safe for `and`/`or` of boolean 0-d tensors outside an `assert` (Python returns one of the operands, a
    0-d bool tensor, and so does the fix); unsafe for `not` (a Python bool becomes a tensor), for operands that
    are not provably boolean 0-d tensors, and inside `assert` (the compiled assertion raises RuntimeError)."""
    t = torch_name(ctx)
    new = bool_tensor(ctx, node, t)
    if new is None or not is_pure(ctx, node):
        return None
    leaves = list(_logic_leaves(node))
    safe = isinstance(node, cst.BooleanOperation) and not in_assert and \
        all(zero_dim(ctx, leaf) and (Tensors.of(ctx).is_bool(leaf) or _any_all(ctx, leaf)) for leaf in leaves) and \
        not any(isinstance(n, cst.UnaryOperation) and isinstance(n.operator, cst.Not) for n in nodes(node))
    return Autofix(f"Combine with `{t}.logical_*` tensor ops", SAFE if safe else UNSAFE,
                   ((node, new.with_changes(lpar=node.lpar, rpar=node.rpar)),), torch_imports(ctx))


def _logic_leaves(node: cst.BaseExpression):
    if isinstance(node, cst.BooleanOperation):
        yield from _logic_leaves(node.left)
        yield from _logic_leaves(node.right)
    elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        yield from _logic_leaves(node.expression)
    else:
        yield node


def builtin_any_all(ctx, call: cst.Call) -> Optional[Autofix]:
    """`any(t)` / `all(t)` of a tensor -> `t.any()` / `t.all()`: unsafe, a Python bool becomes a 0-d tensor."""
    if len(call.args) != 1 or call.args[0].keyword or call.args[0].star:
        return None
    arg = call.args[0].value
    if isinstance(arg, (cst.GeneratorExp, cst.ListComp)) or Tensors.of(ctx).kind(arg) != TENSOR:
        return None
    new = cst.Call(func=cst.Attribute(value=atom(arg), attr=cst.Name(call.func.value)))
    return Autofix(f"Use the tensor method `.{call.func.value}()`", UNSAFE,
                   ((call, new.with_changes(lpar=call.lpar, rpar=call.rpar)),))


def _tensor_logic(ctx, node) -> bool:
    return isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not) and \
        Tensors.of(ctx).kind(node.expression) == TENSOR


# ---- scalars kept as tensors --------------------------------------------------------------------------------
ARITH_OPS = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power)


def tensor_arithmetic_use(ctx, use: cst.CSTNode, parent_of) -> bool:
    """`use` (a scalar pulled out of a tensor) only meets tensors through arithmetic: climbing through
    arithmetic with numbers, unary minus and `abs()`, it reaches an operator or comparison whose other side is a
    tensor. Keeping it a 0-d tensor then gives the same values: 0-d tensors promote like Python numbers."""
    tensors = Tensors.of(ctx)
    operand = use
    for _ in range(32):
        p = parent_of.get(id(operand))
        if isinstance(p, cst.BinaryOperation) and isinstance(p.operator, ARITH_OPS):
            other = p.right if p.left is operand else p.left
            if tensors.kind(other) == TENSOR:
                return True
            if not (_number(other) or tensors.kind(other) == VALUE):
                return False
            operand = p
        elif isinstance(p, cst.UnaryOperation) and isinstance(p.operator, (cst.Minus, cst.Plus)):
            operand = p
        elif isinstance(p, (cst.Comparison, cst.ComparisonTarget)):
            cmp = p if isinstance(p, cst.Comparison) else parent_of.get(id(p))
            if not isinstance(cmp, cst.Comparison) or len(cmp.comparisons) != 1 or \
                    isinstance(cmp.comparisons[0].operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)):
                return False
            other = cmp.comparisons[0].comparator if cmp.left is operand else cmp.left
            return tensors.kind(other) == TENSOR
        elif isinstance(p, cst.Arg) and p.keyword is None and not p.star:
            call = parent_of.get(id(p))
            if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and
                    ctx.qualify(call.func) == "abs" and len(call.args) == 1):
                return False
            operand = call
        else:
            return False
    return False


def returned(use: cst.CSTNode, parent_of) -> bool:
    """`use` is returned (`return v`, `return a, v`)."""
    p = parent_of.get(id(use))
    if isinstance(p, cst.Element):
        p = parent_of.get(id(parent_of.get(id(p))))
    return isinstance(p, cst.Return)


def name_uses(fn: cst.CSTNode, name: str) -> Tuple[List[cst.Name], bool]:
    """(loads of the local `name` in `fn`, whether a nested function, lambda or class mentions it, or a
    `global` / `nonlocal` declares it)."""
    uses, nested = occurrences(fn, name)
    return [u for u, _ in uses if isinstance(u, cst.Name)], nested


def clamp_use(ctx, use: cst.Name, parent_of, floats_ok: bool):
    """`max(v, c)` / `min(v, c)` (c a number) whose result only feeds tensor arithmetic: the call, rewritten as
    `v.clamp(min=c)` / `v.clamp(max=c)` for a 0-d tensor `v`; None otherwise. A float `c` only where `v` is a
    floating value (`clamp` of an integer tensor by a float bound gives a float)."""
    arg = parent_of.get(id(use))
    call = parent_of.get(id(arg))
    if not (isinstance(arg, cst.Arg) and isinstance(call, cst.Call) and isinstance(call.func, cst.Name)
            and call.func.value in ("max", "min") and ctx.qualify(call.func) in ("max", "min")
            and len(call.args) == 2 and all(a.keyword is None and not a.star for a in call.args)):
        return None
    other = call.args[1].value if call.args[0] is arg else call.args[0].value
    if not _number(other) or (not floats_ok and not isinstance(other, cst.Integer)):
        return None
    if not tensor_arithmetic_use(ctx, call, parent_of):
        return None
    bound = "min" if call.func.value == "max" else "max"
    new = cst.Call(func=cst.Attribute(value=cst.Name(use.value), attr=cst.Name("clamp")),
                   args=[cst.Arg(other, keyword=cst.Name(bound), equal=cst.AssignEqual(
                       whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))])
    return call, new.with_changes(lpar=call.lpar, rpar=call.rpar)


def keep_scalar_tensor(ctx, call: cst.Call, replacement: cst.BaseExpression, what: str, value: cst.BaseExpression,
                       floats_ok: bool = False) -> Optional[Autofix]:
    """Drop a scalar extraction (`t.item()`, `float(t)`) of the tensor `value` where the value only feeds tensor
    arithmetic: either directly (`x / t.max().item()`) or through a local assigned once (`peak = ...item()`;
    `x / peak`, also `x / max(peak, 1)`, which becomes `x / peak.clamp(min=1)`). Safe then; unsafe when the local
    is also returned (the caller gets a 0-d tensor instead of a Python number), or when `value` is a tensor only
    by the guess that `forward`'s parameters are (`Tensors.strict_of`: `int(n).long()` of an int would raise).
    `floats_ok`: the value is known to be a float (a float bound in `max(v, 0.5)` keeps its type)."""
    fn = next((f for f in reversed(ctx.functions) if isinstance(f, cst.FunctionDef)), None)
    if fn is None:
        return None
    sure = Tensors.strict_of(ctx).kind(value) == TENSOR
    parents = parent_map(fn)
    title = f"Keep the value as a 0-d tensor ({what})"
    owner = ctx.parent()
    if isinstance(owner, cst.Assign) and owner.value is call:
        if len(owner.targets) != 1 or not isinstance(owner.targets[0].target, cst.Name):
            return None
        name = owner.targets[0].target.value
        values = Tensors.of(ctx).assigned_values(name)
        if len(values) != 1 or values[0] is not call:
            return None                 # assigned more than once, or a parameter too
        uses, nested = name_uses(fn, name)
        if nested or not uses:
            return None
        edits = [(call, replacement)]
        safe = True
        for u in uses:
            if tensor_arithmetic_use(ctx, u, parents):
                continue
            clamp = clamp_use(ctx, u, parents, floats_ok)
            if clamp is not None:
                edits.append(clamp)
            elif returned(u, parents):
                safe = False
            else:
                return None
        return Autofix(title, SAFE if safe and sure else UNSAFE, tuple(edits))
    if tensor_arithmetic_use(ctx, call, parents):
        return Autofix(title, SAFE if sure else UNSAFE, ((call, replacement),))
    return None


def guard_eager_only(ctx, call: cst.Call, what: str) -> Optional[Autofix]:
    """Wrap the statement `call` stands in (a print, a log call) in `if not torch.compiler.is_compiling():` --
    it keeps running eagerly and is skipped while compiling, which Dynamo traces without a break. When that
    statement is the whole body of an `if` with a side-effect-free condition (`if not torch.isfinite(loss):
    logger.warning(...)`), the `if` goes under the guard too, so its condition is not traced either. Safe when
    the call's arguments have no side effects (skipping them changes nothing else); otherwise unsafe."""
    line = standalone_statement(ctx, call)
    if line is None:
        return None
    parents = ctx.parents
    i = len(parents) - 2                # parents[i] is `line`
    target: cst.BaseStatement = line
    while i >= 3 and isinstance(parents[i - 1], cst.IndentedBlock) and len(parents[i - 1].body) == 1 and \
            isinstance(parents[i - 2], cst.If) and parents[i - 2].body is parents[i - 1] and \
            parents[i - 2].orelse is None and statement_parent_ok(parents, i - 2) and is_pure(ctx, parents[i - 2].test):
        target = parents[i - 2]
        i -= 2
    t = torch_name(ctx)
    safe = all(is_pure(ctx, a.value) for a in call.args)
    return Autofix(f"Run {what} only when not compiling (`if not {t}.compiler.is_compiling():`)",
                   SAFE if safe else UNSAFE, ((target, [eager_only(target, t)]),), torch_imports(ctx))


# ---- counters ----------------------------------------------------------------------------------------------
def counter_to_buffer(ctx, update: cst.AugAssign) -> Optional[Autofix]:
    """`self.calls += 1` in a traced method of an nn.Module whose `__init__` set `self.calls = 0`: keep the
    counter in a non-persistent buffer (`self.register_buffer("calls", torch.tensor(0), persistent=False)`), which
    `+=` updates in place inside the graph instead of changing a Python int that Dynamo guards on. Only where
    the class (its source in this file) does nothing else with the attribute: `__init__` sets it once, to an
    integer, on a line of its own after `super().__init__()`, and every other mention adds or subtracts an
    integer. Unsafe: whoever reads the attribute gets a 0-d tensor instead of an int, and it moves with `.to()`."""
    target = update.target
    if not isinstance(target, cst.Attribute):
        return None
    attr, ix, cls = target.attr.value, ctx.index, ctx.class_name
    info = ix.classes.get(cls) if ix is not None and cls else None
    indent = _indent_of(ctx.source, info.start) if info is not None and ctx.source else 0
    module = parse_lines(ctx, info.start, info.end, indent) if info is not None else None
    if module is None:
        return None
    classdef = module.body[0] if len(module.body) == 1 else None
    if not isinstance(classdef, cst.ClassDef) or classdef.name.value != cls or \
            not isinstance(classdef.body, cst.IndentedBlock):
        return None
    init = [s for s in classdef.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"]
    if len(init) != 1 or not isinstance(init[0].body, cst.IndentedBlock):
        return None
    body = list(init[0].body.body)
    supers = [i for i, s in enumerate(body) if _is_super_init(s)]
    sets = [i for i, s in enumerate(body) if _sets_self_attr(s, attr)]
    if not supers or not sets or sets[0] < supers[0] or not _integer(body[sets[0]].body[0].value):
        return None
    setting = body[sets[0]]
    # every `self.<attr>` in the class is that assignment's target or adds / subtracts an integer
    every = nodes(classdef)
    allowed = {id(setting.body[0].targets[0].target)} | {
        id(n.target) for n in every if isinstance(n, cst.AugAssign) and _integer(n.value) and
        isinstance(n.operator, (cst.AddAssign, cst.SubtractAssign))}
    if any(_is_self_attr(n, attr) and id(n) not in allowed for n in every):
        return None
    r = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)[setting]
    if r.start.line != r.end.line:
        return None
    t = torch_name(ctx)
    value = code(setting.body[0].value)
    new = setting.with_changes(body=[cst.parse_statement(
        f'self.register_buffer("{attr}", {t}.tensor({value}), persistent=False)\n').body[0]], leading_lines=())
    line = r.start.line + info.start - 1
    edit = Edit(line, r.start.column + indent, line, r.end.column + indent, "SimpleStatementLine",
                module.code_for_node(new), True)
    return Autofix(f"Keep `self.{attr}` in a buffer (`self.register_buffer(\"{attr}\", {t}.tensor({value}), "
                   f"persistent=False)` in `__init__`)", UNSAFE, (), torch_imports(ctx), (edit,))


def _integer(node: cst.CSTNode) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, cst.Integer)


def _is_self_attr(node: cst.CSTNode, attr: str) -> bool:
    return isinstance(node, cst.Attribute) and node.attr.value == attr and isinstance(node.value, cst.Name) and \
        node.value.value == "self"


def _sets_self_attr(stmt: cst.CSTNode, attr: str) -> bool:
    """`self.<attr> = value` alone on its line."""
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and \
        isinstance(stmt.body[0], cst.Assign) and len(stmt.body[0].targets) == 1 and \
        _is_self_attr(stmt.body[0].targets[0].target, attr)


def _is_super_init(stmt: cst.CSTNode) -> bool:
    """`super().__init__(...)` or `super(Cls, self).__init__(...)` as a statement."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)):
        return False
    call = stmt.body[0].value
    return isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and \
        call.func.attr.value == "__init__" and isinstance(call.func.value, cst.Call) and \
        isinstance(call.func.value.func, cst.Name) and call.func.value.func.value == "super"


def _indent_of(source: str, line: int) -> int:
    text = list(io.StringIO(source, newline=""))[line - 1]
    return len(text) - len(text.lstrip(" "))
