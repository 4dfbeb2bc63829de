"""DYN4xx: data-dependent shapes — ops whose output size depends on tensor values."""
from __future__ import annotations

import libcst as cst

from dynlint.rules.base import Example, register
from dynlint.rules.common import TorchRule
from dynlint.rules.tensors import TENSOR, WEAK

DYNAMIC = "Dynamic shape operator"
VALUE_SHAPED = frozenset({"nonzero", "masked_select", "unique", "unique_consecutive", "argwhere"})


@register
class DataDependentShapeOp(TorchRule):
    """Checks for ops whose output shape depends on tensor values: `nonzero`, `masked_select`, `unique`,
    `argwhere`, and `repeat_interleave` with tensor repeats."""
    code = "DYN401"
    name = "data-dependent-shape-op"
    message = "`{op}` returns a tensor whose size depends on its values: Dynamo breaks the graph"
    fix = "Keep shapes static: use a mask (`torch.where(mask, x, 0)`) instead of selecting, or set `torch._dynamo.config.capture_dynamic_output_shape_ops = True`"
    gb_types = (DYNAMIC,)
    why = """
        The output size of these ops is only known after running them. With the default
        `capture_dynamic_output_shape_ops=False` Dynamo ends the graph at the op (`Dynamic shape operator`)
        and everything after it is traced again per call with new sizes.
    """
    INVALID = [
        Example("""
            import torch

            @torch.compile
            def active(x):
                idx = torch.nonzero(x > 0)
                return idx.float().mean()
        """, "active(torch.tensor([1.0, -1.0, 2.0]))"),
        Example("""
            import torch

            @torch.compile
            def distinct(x):
                return x.unique().sum()
        """, "distinct(torch.tensor([1.0, 1.0, 2.0]))"),
    ]
    VALID = [Example("""
        import torch

        @torch.compile
        def active(x):
            mask = x > 0
            return torch.where(mask, x, 0.0).sum() / mask.sum()
    """, "active(torch.tensor([1.0, -1.0, 2.0]))")]

    def visit_Call(self, node: cst.Call) -> None:
        name = self.call_name(node) or ""
        method = self.method_name(node)
        if name.startswith("torch.") and name[6:] in VALUE_SHAPED:
            self.report(node, op=name)
        elif name == "torch.repeat_interleave" and len(node.args) >= 2 and self.tensors.is_tensor(node.args[1].value):
            self.report(node, op=name)
        elif method and not name.startswith("torch.") and self.tensors.kind(self.receiver(node)) in (TENSOR, WEAK):
            if method in VALUE_SHAPED:
                self.report(node, op=f".{method}()")
            elif method == "repeat_interleave" and node.args and self.tensors.is_tensor(node.args[0].value):
                self.report(node, op=".repeat_interleave()")


@register
class BooleanMaskIndexing(TorchRule):
    """Checks for reading a tensor through a boolean mask, `x[x > 0]` (assigning through a mask is fine)."""
    code = "DYN402"
    name = "boolean-mask-indexing"
    message = "indexing with a boolean mask gives a value-dependent shape: Dynamo breaks the graph"
    fix = "Keep the shape: `torch.where(mask, x, 0)` and reduce, or assign through the mask (`x[mask] = 0` does not break)"
    gb_types = (DYNAMIC,)
    why = """
        `x[mask]` has as many elements as `mask` has `True` values, which Dynamo cannot know while tracing;
        it breaks the graph like `nonzero` (`Dynamic shape operator`). Assigning through a mask
        (`x[mask] = 0`) keeps the shape and is traced without a break.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def positive_mean(x):
            return x[x > 0].mean()
    """, "positive_mean(torch.tensor([1.0, -1.0, 3.0]))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def clamp_negative(x):
            x = x.clone()
            x[x < 0] = 0
            return x.mean()
    """, "clamp_negative(torch.tensor([1.0, -1.0, 3.0]))")]

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return
        index = node.slice[0].slice.value
        if not self._is_bool_mask(index) or not self.tensors.kind(node.value) in (TENSOR, WEAK):
            return
        parent = self.ctx.parent(0)
        if isinstance(parent, (cst.AssignTarget,)) or (isinstance(parent, cst.AugAssign) and parent.target is node):
            return
        self.report(node)

    def _is_bool_mask(self, index: cst.BaseExpression) -> bool:
        if isinstance(index, cst.Comparison):
            ops = [c.operator for c in index.comparisons]
            return not any(isinstance(o, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for o in ops) and \
                self.tensors.kind(index) in (TENSOR, WEAK)
        if isinstance(index, cst.UnaryOperation) and isinstance(index.operator, cst.BitInvert):
            return self._is_bool_mask(index.expression)
        if isinstance(index, cst.BinaryOperation) and isinstance(index.operator, (cst.BitAnd, cst.BitOr)):
            return self._is_bool_mask(index.left) or self._is_bool_mask(index.right)
        if isinstance(index, cst.Call):
            m = self.method_name(index)
            q = self.call_name(index) or ""
            return (m in ("isnan", "isinf", "isfinite", "logical_not", "logical_and", "logical_or", "bool",
                          "eq", "ne", "gt", "lt", "ge", "le") and self.tensors.is_tensor(index)) or \
                q in ("torch.isnan", "torch.isinf", "torch.isfinite", "torch.logical_not", "torch.logical_and")
        return False
