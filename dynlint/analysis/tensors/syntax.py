"""What an expression looks like, before any name in it is judged: literals, devices, numpy draws given a size,
optional parameters."""
from __future__ import annotations

import ast
import functools
from typing import Dict, List, Optional

import libcst as cst

from dynlint.analysis.tensors.torch_api import NP_TRACED_DRAWS

# Comparisons that give a Python bool whatever their operands.
NON_TENSOR_TESTS = (cst.Is, cst.IsNot, cst.In, cst.NotIn)


def np_sized_draw(node: cst.Call, fn: str) -> bool:
    """`np.random.<fn>(...)` is given a size (so it draws an array)."""
    positional = [a for a in node.args if a.keyword is None and not a.star]
    return any(a.keyword is not None and a.keyword.value == "size" for a in node.args) or \
        len(positional) > NP_TRACED_DRAWS[fn] or any(a.star for a in node.args)


def optional_param(p: cst.Param) -> bool:
    """`mask=None` (unannotated) or `mask: Optional[...] = ...` / `mask: Tensor | None`."""
    if p.annotation is not None:
        text = cst.Module([]).code_for_node(p.annotation.annotation)
        return "Optional" in text or "None" in text
    return isinstance(p.default, cst.Name) and p.default.value == "None"


def int_literal(node: cst.CSTNode) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        node = node.expression
    return isinstance(node, cst.Integer)


def float_literal(node: cst.CSTNode) -> bool:
    """`0.5`, `-1e-6`, `float("inf")`."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return float_literal(node.expression)
    return isinstance(node, cst.Float) or (
        isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "float" and
        len(node.args) == 1 and isinstance(node.args[0].value, cst.SimpleString))


def float_data(node: cst.CSTNode) -> bool:
    """Literal data for `torch.tensor` that it makes floating: numbers (nested lists and tuples of them), one of
    them a float (`[1, 2.5]`; `[1, 2]` gives int64)."""
    leaves: List[cst.CSTNode] = []

    def collect(n: cst.CSTNode) -> bool:
        if isinstance(n, (cst.List, cst.Tuple)):
            return all(isinstance(e, cst.Element) and collect(e.value) for e in n.elements)
        leaves.append(n)
        inner = n.expression if isinstance(n, cst.UnaryOperation) and isinstance(n.operator, (cst.Minus, cst.Plus)) \
            else n
        return isinstance(inner, (cst.Integer, cst.Float)) or float_literal(n) or \
            (isinstance(n, cst.Name) and n.value in ("True", "False"))

    return collect(node) and any(float_literal(n) for n in leaves)


def is_device(ctx, node: cst.CSTNode) -> bool:
    """A device argument of `.to()`: `"cuda"`, `x.device`, `torch.device(...)`."""
    return isinstance(node, cst.SimpleString) or (isinstance(node, cst.Attribute) and node.attr.value == "device") \
        or (isinstance(node, cst.Call) and (ctx.qualify(node.func) or "") == "torch.device")


def keyword_arg(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    """The value of the call's `name=` argument, None without one."""
    return next((a.value for a in call.args if a.keyword and a.keyword.value == name), None)


def bound_arguments(call: cst.Call, positions: List[str]) -> Dict[str, cst.BaseExpression]:
    """Parameter name -> the argument the call passes to it: its positional arguments to `positions` (in order),
    its keyword arguments by name."""
    bound: Dict[str, cst.BaseExpression] = {}
    for i, a in enumerate(a for a in call.args if a.keyword is None):
        if i < len(positions):
            bound[positions[i]] = a.value
    for a in call.args:
        if a.keyword is not None:
            bound[a.keyword.value] = a.value
    return bound


@functools.lru_cache(maxsize=256)
def type_comment(fn: cst.FunctionDef) -> Dict[str, cst.BaseExpression]:
    """Parameter name -> its type from the function's PEP 484 type comment (`# type: (Tensor, int) -> Tensor` on
    the line after the `def`, as TorchScript-era code writes them); a method's comment may leave out `self`.
    Empty when there is none or it does not parse."""
    body = fn.body
    if not isinstance(body, cst.IndentedBlock):
        return {}
    comments = [body.header.comment] + [line.comment for line in
                                        (body.body[0].leading_lines if body.body else ())]
    text = next((c.value[1:].strip() for c in comments if c is not None and
                 c.value[1:].strip().startswith("type:") and "->" in c.value), None)
    if text is None:
        return {}
    try:
        sig = cst.parse_expression("f" + text[len("type:"):].split("->")[0].strip())
    except (cst.ParserSyntaxError, RecursionError, ValueError):     # not a type comment dynlint can read
        return {}
    if not isinstance(sig, cst.Call) or any(a.keyword or a.star for a in sig.args):
        return {}
    params = [p.name.value for p in fn.params.posonly_params + fn.params.params]
    if len(sig.args) == len(params) - 1 and params and params[0] in ("self", "cls"):
        params = params[1:]
    if len(sig.args) != len(params):
        return {}
    return {name: a.value for name, a in zip(params, sig.args)}


def tensor_field(source: str, cls: str, attr: str, annotations: frozenset) -> bool:
    """The top-level class `cls` of the file annotates `attr` in its body with a tensor type (`tokens:
    torch.Tensor`, as dataclasses, NamedTuples and typed classes declare their fields)."""
    return _class_fields(source).get(cls, {}).get(attr) in annotations


@functools.lru_cache(maxsize=8)
def _class_fields(source: str) -> Dict[str, Dict[str, str]]:
    """class -> {field: its annotation as written}, for the file's top-level classes (one parse per file)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    return {c.name: {s.target.id: ast.unparse(s.annotation) for s in c.body
                     if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
            for c in tree.body if isinstance(c, ast.ClassDef)}
