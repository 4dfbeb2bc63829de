"""Tensor identity for the fixes: which values may be a tensor the caller holds, and where a function hands a
tensor on as itself.

`torch.where(c, a, b)` returns a new tensor; the branch it replaces handed on `a` or `b` themselves. When one of
them is the caller's tensor (a parameter, an attribute, a view of one), the caller can tell: `f(x) is x` was
true, and an in-place update of the result (or by the function itself: `x += 1`) used to change `x`. The fixes
ask two questions, answered here once: `may_alias` (could this value be a tensor the caller holds?) and
`handed_on` / `name_escapes` (does the function give the value away as itself: return it, store it, pass it to
a call, update it in place?). Both err on the side of "yes".
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

from dynlint.analysis.tensors.inference import Tensors
from dynlint.analysis.tensors.torch_api import TENSOR_METHODS, VALUE_ATTRS, VALUE_METHODS
from dynlint.linter.walker import children, walk

VIEWS = frozenset({"view", "reshape", "transpose", "permute", "squeeze", "unsqueeze", "expand", "expand_as",
                   "narrow", "select", "t", "contiguous", "detach", "flatten", "unflatten", "view_as", "as_strided",
                   "chunk", "split", "unbind", "movedim", "swapaxes", "diagonal", "real", "imag", "to", "type_as"})
ALIASING_METHODS = frozenset({"detach", "contiguous"})      # may return their receiver's storage, or itself
# Results that may be the tensor itself (`x.float()` of a float `x` is `x`), a view of it, or its memory.
SAME_TENSOR = VIEWS | ALIASING_METHODS | frozenset({
    "float", "double", "half", "bfloat16", "int", "long", "short", "byte", "char", "bool", "cpu", "cuda", "type",
    "numpy", "data_ptr", "untyped_storage", "storage", "is_set_to", "as_subclass", "broadcast_to",
    "broadcast_tensors", "tensor_split", "hsplit", "vsplit", "dsplit", "unfold", "view_as_real", "view_as_complex",
    "as_tensor", "asarray", "atleast_1d", "atleast_2d", "atleast_3d", "conj", "resolve_conj", "resolve_neg",
    "adjoint", "moveaxis", "swapdims", "align_to", "rename", "refine_names", "values", "indices"})
# Tensor methods whose result is a new tensor (or a Python value): reading a tensor through them hands it on
# to nobody.
FRESH_METHODS = (TENSOR_METHODS | VALUE_METHODS | frozenset({
    "nan_to_num", "clamp_min", "clamp_max", "log_softmax", "logsumexp", "nanmean", "signbit", "isposinf",
    "isneginf", "cumprod", "sin", "cos", "erf"})) - SAME_TENSOR
FRESH_ATTRIBUTES = VALUE_ATTRS - {"grad_fn", "is_leaf"}     # a new tensor has a grad_fn, a parameter has none
FRESH_BUILTINS = frozenset({"len", "isinstance", "float", "int", "bool", "str", "repr", "print", "abs"})


def may_alias(ctx, node: cst.CSTNode, depth: int = 0, names: frozenset = frozenset()) -> bool:
    """`node` may be (a view of) a tensor the caller also holds: a parameter, an attribute, a subscript, or a
    local bound to one. Handing on `torch.where(...)` instead gives a new tensor: same values, other identity.
    (`names`: the locals being looked into; `y = y.detach()` adds no tensor of the caller's to `y`'s others.)"""
    if depth > 8:
        return True
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        q = ctx.qualify(node.func) or ""
        if not q.startswith("torch.") and node.func.attr.value in SAME_TENSOR:
            return may_alias(ctx, node.func.value, depth + 1, names)
        return False
    if isinstance(node, cst.Call):
        # a helper of this file may hand back what it was given (`return t.float()`): its returns, in its body
        tensors = Tensors.of(ctx)
        helper = tensors.helper(node.func)
        if helper is not None:
            with tensors.within(helper[0]):
                return any(may_alias(ctx, r, depth + 1) for r in helper[1])
        return False
    if isinstance(node, (cst.Attribute, cst.Subscript)):
        return True
    if isinstance(node, cst.Name):
        if node.value in names:
            return False
        tensors = Tensors.of(ctx)
        bound = tensors.bindings(node.value)          # `a, b = self.sub(x)`: what sub's forward returns
        # (the names being looked into here mean nothing in sub's forward)
        return not bound or any(tensors.judged(v, fn, cls, partial(
            may_alias, ctx, depth=depth + 1, names=frozenset() if fn else names | {node.value}))
            for v, fn, cls in bound)
    return False


def handed_on(ctx, node: cst.CSTNode, parent_of: dict, depth: int = 0) -> bool:
    """The tensor `node` evaluates to may leave as itself, or be looked at as an object: returned, yielded,
    stored, bound to another name, passed to a call that is not a known tensor op, updated in place, compared
    with `is`, read through a view (`x[0]`, `x.view(-1)`) that goes on to do any of these. Arithmetic, tensor
    methods and torch functions that compute a new tensor, and attributes such as `.shape`, see only values."""
    if depth > 16:
        return True
    p = parent_of.get(id(node))
    if isinstance(p, (cst.BinaryOperation, cst.UnaryOperation)):
        return False
    if isinstance(p, cst.ComparisonTarget):
        p = parent_of.get(id(p))
    if isinstance(p, cst.Comparison):       # `is` and `in` look at identity
        return any(isinstance(c.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for c in p.comparisons)
    if isinstance(p, (cst.If, cst.While, cst.Assert)) and p.test is node:
        return False
    if isinstance(p, cst.IfExp):
        return p.test is not node and handed_on(ctx, p, parent_of, depth + 1)
    if isinstance(p, cst.BooleanOperation):                  # `x or y` is x or y itself
        return handed_on(ctx, p, parent_of, depth + 1)
    if isinstance(p, cst.Subscript) and p.value is node:     # a view
        return handed_on(ctx, p, parent_of, depth + 1)
    if isinstance(p, cst.Attribute) and p.value is node:
        call = parent_of.get(id(p))
        if not (isinstance(call, cst.Call) and call.func is p):
            return p.attr.value not in FRESH_ATTRIBUTES
        method = p.attr.value
        if method in SAME_TENSOR:
            return handed_on(ctx, call, parent_of, depth + 1)
        return method not in FRESH_METHODS or method.endswith("_")
    if isinstance(p, cst.Element):                           # `torch.cat([x, y])`
        container = parent_of.get(id(p))
        return not (isinstance(container, (cst.List, cst.Tuple)) and
                    _fresh_argument(ctx, container, parent_of))
    return not _fresh_argument(ctx, node, parent_of)


def _fresh_argument(ctx, node: cst.CSTNode, parent_of: dict) -> bool:
    """`node` is an argument of a torch function that computes a new tensor (not a view, not in place, no
    `out=`), or of a builtin that only reads it (`len`, `float`)."""
    arg = parent_of.get(id(node))
    call = parent_of.get(id(arg))
    if not (isinstance(arg, cst.Arg) and isinstance(call, cst.Call) and arg.value is node):
        return False
    q = ctx.qualify(call.func) or ""
    if isinstance(call.func, cst.Name) and q in FRESH_BUILTINS:
        return True
    name = q.rsplit(".", 1)[-1]
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    return q.startswith("torch.") and not q.startswith("torch.Tensor.") and name not in SAME_TENSOR and \
        not name.endswith("_") and not keywords & {"out", "inplace"}


def name_escapes(ctx, name: str, at: cst.CSTNode, ancestors: Sequence[cst.CSTNode], before: bool) -> bool:
    """Whether the function around the statement `at` (whose ancestors are `ancestors`) hands on the tensor held
    by its local `name` as itself (see `handed_on`), or updates it in place (`name += v`), before `at`
    (`before`) or after it: anywhere where `at` lies in a loop (an iteration reads what the one before bound),
    never inside `at`. A nested function, lambda or class that mentions `name`, or `global name`, counts too."""
    fn_at = next((i for i in range(len(ancestors) - 1, -1, -1) if isinstance(ancestors[i], cst.FunctionDef)), None)
    if fn_at is None:
        return True                                          # module level: anyone may read it
    fn = ancestors[fn_at]
    in_loop = any(isinstance(a, (cst.For, cst.While)) for a in ancestors[fn_at + 1:])
    uses, nested = occurrences(fn, name, at)
    if nested:
        return True
    parent_of = parent_map(fn)
    return any((in_loop or after != before) and (isinstance(use, cst.AugAssign) or handed_on(ctx, use, parent_of))
               for use, after in uses)


def occurrences(fn: cst.CSTNode, name: str, at: Optional[cst.CSTNode] = None):
    """([(use, after)], nested): the loads of the local `name` in `fn` (its Name nodes) and its in-place updates
    (`name += v`: the AugAssign), in source order, each with whether it comes after the statement `at` (whose
    own are left out); and whether a nested function, lambda or class mentions `name`, or `global` /
    `nonlocal` declares it. Read from the function's index of names, built once: a rule asks this for each of
    its findings, and a walk per question made a function of n findings cost n walks of it."""
    index = _names_of(fn)
    start, end = index.spans.get(id(at), (-1, -1)) if at is not None else (-1, -1)
    uses = [(use, order >= end > 0) for use, order in index.uses.get(name, ()) if not start <= order < end]
    nested = any(not start <= order < end for order in index.nested.get(name, ()))
    return uses, nested


@dataclass
class _Names:
    uses: Dict[str, List[Tuple[cst.CSTNode, int]]]     # name -> (load or AugAssign, its order in the walk)
    nested: Dict[str, List[int]]                       # name -> orders of nested scopes and declarations naming it
    spans: Dict[int, Tuple[int, int]]                  # id(node) -> [first order, past its last)


@lru_cache(maxsize=16)
def _names_of(fn: cst.CSTNode) -> _Names:
    """One walk of `fn` (libcst nodes hash by identity; the cache holds the few functions a unit asks about)."""
    index = _Names({}, {}, {})
    not_loads = set()
    counter = [0]
    stack: List[Tuple[int, int]] = []

    def enter(n) -> bool:
        order = counter[0]
        counter[0] += 1
        if n is not fn and isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            for x in nodes(n):                        # not walked into (no `leave`): its names say `nested`
                if isinstance(x, cst.Name):
                    index.nested.setdefault(x.value, []).append(order)
            index.spans[id(n)] = (order, order + 1)
            return False
        stack.append((id(n), order))
        if isinstance(n, (cst.Global, cst.Nonlocal)):
            for a in n.names:
                index.nested.setdefault(a.name.value, []).append(order)
        elif isinstance(n, cst.AssignTarget):
            not_loads.add(id(n.target))
        elif isinstance(n, (cst.AugAssign, cst.AnnAssign)):
            not_loads.add(id(n.target))
            if isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Name):
                index.uses.setdefault(n.target.value, []).append((n, order))
        elif isinstance(n, cst.Attribute):
            not_loads.add(id(n.attr))
        elif isinstance(n, cst.Arg) and n.keyword is not None:
            not_loads.add(id(n.keyword))
        elif isinstance(n, cst.Param):
            not_loads.add(id(n.name))
        elif isinstance(n, cst.Name) and id(n) not in not_loads:
            index.uses.setdefault(n.value, []).append((n, order))
        return True

    def leave(n) -> None:
        key, order = stack.pop()
        index.spans[key] = (order, counter[0])

    walk(fn, enter, leave)
    return index


def value_before(block: Sequence[cst.BaseStatement], at: cst.CSTNode, name: str):
    """The value the statement `at` of `block` finds in `name`: that of the last `name = value` line before it
    in the same block (in-place updates `name += v` in between keep the tensor). None when unknown: bound
    otherwise (in a nested block, a loop target, unpacking), or not in this block (a parameter)."""
    stmts = list(block)
    end = next((i for i, s in enumerate(stmts) if s is at), None)
    if end is None:
        return None
    for stmt in reversed(stmts[:end]):
        line = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        if isinstance(line, cst.Assign) and len(line.targets) == 1 and \
                isinstance(line.targets[0].target, cst.Name) and line.targets[0].target.value == name:
            return line.value
        if isinstance(line, cst.AugAssign) and isinstance(line.target, cst.Name) and line.target.value == name:
            continue
        if _binds(stmt, name):
            return None
    return None


def _binds(stmt: cst.CSTNode, name: str) -> bool:
    """`stmt` may bind `name`: an assignment target, loop or `with` target, walrus, import, def or class."""
    targets = []
    for n in nodes(stmt):
        if isinstance(n, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr)):
            targets.append(n.target)
        elif isinstance(n, cst.AsName):
            targets.append(n.name)
        elif isinstance(n, (cst.FunctionDef, cst.ClassDef)):
            targets.append(n.name)
        elif isinstance(n, cst.Del):
            targets.append(n.target)
        elif isinstance(n, (cst.Import, cst.ImportFrom)):
            return True
    return any(isinstance(x, cst.Name) and x.value == name for t in targets for x in nodes(t))


def nodes(node: cst.CSTNode) -> List[cst.CSTNode]:
    """`node` and everything below it, depth first."""
    out: List[cst.CSTNode] = []
    walk(node, lambda n: out.append(n) or True, lambda n: None)
    return out


@lru_cache(maxsize=8)
def parent_map(root: cst.CSTNode) -> dict:
    """id(node) -> parent, for the semantic children of `root` (not to be changed: it is shared). Asked per
    finding about the same function: memoised, or many findings in one function are quadratic."""
    out = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for c in children(node):
            out[id(c)] = node
            stack.append(c)
    return out
