"""Which values are floating-point tensors (`Tensors.floating`): what `torch.randn(...)`, `x.float()`, `torch.exp(x)`
and `x / n` give, judged from torch's dtype tables (`torch_api`) with the tensor kinds of `inference`."""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from dynlint.analysis.tensors.kinds import FLOAT_IF_TENSOR, FLOAT_TENSOR, NOT_FLOAT, TENSOR, WEAK
from dynlint.analysis.tensors.syntax import float_data, float_literal, is_device, keyword_arg
from dynlint.analysis.tensors.torch_api import (
    CONCAT_FUNCS, DEVICE_ONLY_KEYWORDS, DTYPE_ARG_FUNCS, DTYPE_ARG_METHODS, DTYPE_KEEPING_FUNCS, DTYPE_KEEPING_METHODS,
    FLOAT_ARITH, FLOAT_DTYPES, FLOAT_FACTORIES, FLOAT_RESULT_FUNCS, FLOAT_RESULT_METHODS)


class Floating:
    """The floating-point levels of one unit's expressions, judged with its tensor analysis (`Tensors`), which
    holds one."""

    def __init__(self, tensors):
        self.tensors, self.ctx = tensors, tensors.ctx
        self._assumed: Dict[Tuple[int, str], int] = {}   # (env, name) -> level assumed while judging it
        self._helpers: Dict[str, int] = {}               # helper name -> level of what it returns

    def floating(self, node: cst.CSTNode) -> int:
        """What `node` is known to be, dtype-wise: FLOAT_TENSOR (a floating-point tensor), FLOAT_IF_TENSOR (never
        a tensor of another dtype: a Python float, or `x * 0.5` for an `x` that may not be a tensor at all) or
        NOT_FLOAT (not known: unknown is never taken for floating). Floating tensors come from the functions and
        methods of the tables (`torch.randn(...)`, `x.float()`, `x.mean()`, `torch.exp(x)`), true division
        and float numbers in arithmetic with a tensor (`x / n`, `x * 0.5`), arithmetic with a floating tensor
        (whatever the other side: torch promotes to the floating operand), indexing one, a helper defined at the
        top of this file all of whose returns are one (`_returns_float`), and a local all of whose assignments
        are one (tensor-ness as `kind` judges it)."""
        try:
            return self._floating(node)
        except RecursionError:
            return NOT_FLOAT

    def _floating(self, node: cst.CSTNode) -> int:
        if isinstance(node, cst.Name):
            return self._float_name(node.value)
        if isinstance(node, (cst.Integer, cst.Float)) or float_literal(node):
            return FLOAT_IF_TENSOR                              # a Python number is no tensor of another dtype
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
            return self._floating(node.expression)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, FLOAT_ARITH):
            return self._float_arithmetic(node)
        if isinstance(node, cst.Subscript) or \
                (isinstance(node, cst.Attribute) and node.attr.value in ("T", "mT", "data")):
            return FLOAT_TENSOR if self._floating(node.value) == FLOAT_TENSOR else NOT_FLOAT
        if isinstance(node, cst.IfExp):
            return min(self._floating(node.body), self._floating(node.orelse))
        if isinstance(node, cst.Call):
            return FLOAT_TENSOR if self._float_call(node) else NOT_FLOAT
        return NOT_FLOAT

    def _float_arithmetic(self, node: cst.BinaryOperation) -> int:
        left, right = self._floating(node.left), self._floating(node.right)
        if FLOAT_TENSOR in (left, right):
            return FLOAT_TENSOR
        if isinstance(node.operator, cst.Divide) or float_literal(node.left) or float_literal(node.right):
            # `a / b`, `a * 0.5`: floating whenever it is a tensor; known to be one when a side is
            tensor = TENSOR in (self.tensors.kind(node.left), self.tensors.kind(node.right))
            return FLOAT_TENSOR if tensor else FLOAT_IF_TENSOR
        return FLOAT_IF_TENSOR if left and right else NOT_FLOAT

    def _float_name(self, name: str) -> int:
        """A local's level: the lowest of its assignments' (a parameter's: not known). `x = x * 0.5` is judged
        assuming `x` floating, then again assuming what that gave, until it holds (every value the name ever
        takes was computed from values it had before)."""
        env = self.tensors._env()
        key = (id(env), name)
        if key in self._assumed:
            return self._assumed[key]
        memo = env.setdefault(" float memo", {})
        if name in memo:
            return memo[name]
        budget = env.setdefault(" float budget", [2000])        # kept apart from kind's budget
        bound = self.tensors.bindings(name)
        if not bound or budget[0] <= 0:
            return NOT_FLOAT
        budget[0] -= 1
        level = FLOAT_TENSOR
        try:
            while True:
                self._assumed[key] = level
                found = min(self.tensors.judged(v, fn, cls, self._floating) for v, fn, cls in bound)
                if found >= level or found == NOT_FLOAT:
                    level = found
                    break
                level = found
        finally:
            del self._assumed[key]
        if level == NOT_FLOAT or not self._assumed:      # else it rests on assumptions still open
            memo[name] = level
        return level

    def _float_call(self, call: cst.Call) -> bool:
        if any(a.star for a in call.args):
            return False                                    # *args / **kwargs may hold a dtype
        dtype = keyword_arg(call, "dtype")
        if dtype is not None and (self.ctx.qualify(dtype) or "") not in FLOAT_DTYPES:
            return False
        positional = [a.value for a in call.args if a.keyword is None]
        func = call.func
        q = self.ctx.qualify(func) or ""
        if q.startswith("torch."):
            return self._float_torch_call(call, q, dtype, positional)
        if isinstance(func, cst.Name):
            return self._returns_float(func) == FLOAT_TENSOR      # a helper of this file
        if not isinstance(func, cst.Attribute):
            return False
        return self._float_method(call, func.attr.value, func.value, dtype, positional)

    def _float_torch_call(self, call: cst.Call, q: str, dtype: Optional[cst.BaseExpression],
                          positional: List[cst.BaseExpression]) -> bool:
        """`torch.<fn>(...)` (`q`) makes a floating tensor."""
        if dtype is not None:
            return q in DTYPE_ARG_FUNCS
        if q in FLOAT_RESULT_FUNCS or q in FLOAT_FACTORIES:
            return True
        if q in DTYPE_KEEPING_FUNCS:
            return bool(positional) and self._floating(positional[0]) == FLOAT_TENSOR
        if q in CONCAT_FUNCS:
            parts = positional[0] if positional else None
            return isinstance(parts, (cst.List, cst.Tuple)) and any(
                isinstance(e, cst.Element) and self._floating(e.value) == FLOAT_TENSOR for e in parts.elements)
        if q == "torch.full":
            fill = positional[1] if len(positional) > 1 else keyword_arg(call, "fill_value")
            return fill is not None and float_literal(fill)
        if q in ("torch.tensor", "torch.as_tensor"):
            return len(positional) == 1 and float_data(positional[0])   # (a second one is a dtype)
        return False

    def _float_method(self, call: cst.Call, method: str, recv: cst.BaseExpression,
                      dtype: Optional[cst.BaseExpression], positional: List[cst.BaseExpression]) -> bool:
        """`recv.<method>(...)` makes a floating tensor."""
        if method in ("to", "type"):
            return self._float_cast(call, method, recv, dtype, positional)
        if method == "type_as":
            return len(positional) == 1 and self._tensor_like(recv) and \
                self._floating(positional[0]) == FLOAT_TENSOR
        if dtype is not None:
            return method in DTYPE_ARG_METHODS and self._tensor_like(recv)
        if method in FLOAT_RESULT_METHODS:
            return self._tensor_like(recv)
        if method in DTYPE_KEEPING_METHODS:
            if method in ("max", "min") and call.args:
                return False                                # values and indices, or an elementwise maximum
            if method == "view" and len(positional) == 1 and not isinstance(
                    positional[0], (cst.Integer, cst.UnaryOperation, cst.Tuple, cst.List)):
                return False                                # x.view(torch.int32) reinterprets the bytes
            return self._floating(recv) == FLOAT_TENSOR
        return False

    def _float_cast(self, call: cst.Call, method: str, recv: cst.BaseExpression,
                    dtype: Optional[cst.BaseExpression], positional: List[cst.BaseExpression]) -> bool:
        """`recv.to(...)` / `recv.type(...)` makes a floating tensor."""
        if not self._tensor_like(recv):
            return False
        if dtype is not None or any((self.ctx.qualify(p) or "") in FLOAT_DTYPES for p in positional):
            return True                                 # x.to(torch.float16), x.to(device, torch.half)
        if method == "type":
            return False
        if len(positional) == 1 and len(call.args) == 1 and self._floating(positional[0]) == FLOAT_TENSOR:
            return True                                 # x.to(other): other's dtype
        return self._floating(recv) == FLOAT_TENSOR and all(is_device(self.ctx, p) for p in positional) and \
            all(a.keyword.value in DEVICE_ONLY_KEYWORDS for a in call.args if a.keyword)   # the dtype is kept

    def _tensor_like(self, node: cst.CSTNode) -> bool:
        """A receiver whose `.float()`, `.mean()` ... is a tensor: one, probably one, or a floating one."""
        return self.tensors.kind(node) in (TENSOR, WEAK) or self._floating(node) == FLOAT_TENSOR

    def _returns_float(self, func: cst.Name) -> int:
        """The level of what a helper of this file returns (`helper`): the lowest of its `return` values',
        judged in its own body."""
        found = self.tensors.helper(func)
        if found is None:
            return NOT_FLOAT
        fn, returns = found
        name = fn.name.value
        if name not in self._helpers:
            self._helpers[name] = NOT_FLOAT                 # a recursive call is not known
            with self.tensors.within(fn):
                self._helpers[name] = min(self._floating(r) for r in returns)
        return self._helpers[name]
