"""DYN1xx: data-dependent control flow — Python branching on tensor values."""
from __future__ import annotations

import libcst as cst

from dynlint.rules.base import Example, register
from dynlint.rules.common import TorchRule
from dynlint.rules.tensors import TENSOR

BRANCH = "Data-dependent branching"
ITEM = "Unsupported Tensor.item() call with capture_scalar_outputs=False"


def _truth_operands(test: cst.BaseExpression):
    """The expressions whose truth value Python asks for: `a and not b` -> a, b."""
    if isinstance(test, cst.BooleanOperation):
        yield from _truth_operands(test.left)
        yield from _truth_operands(test.right)
    elif isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        yield from _truth_operands(test.expression)
    else:
        yield test


@register
class TensorConditionInBranch(TorchRule):
    """Checks for `if`, `elif`, `while` and conditional expressions whose condition is a tensor value."""
    code = "DYN101"
    name = "tensor-condition-in-branch"
    message = "branch on a tensor value `{expr}`: Dynamo cannot know which way to go while tracing"
    fix = "Express both arms as tensor ops (`torch.where`), use `torch.cond`, or branch on shapes/config instead"
    gb_types = (BRANCH, ITEM)
    why = """
        Dynamo traces with symbolic tensors whose values are unknown at compile time. A Python `if` on a
        tensor value forces the value to the host, so Dynamo ends the graph before the branch and resumes
        in a new graph after it (`Data-dependent branching`). Each break costs a host sync and splits
        the fused kernels; under `fullgraph=True` it is an error. Conditions on shapes, dtypes, devices,
        `self.training` or `is None` are fine: they are known while tracing.
    """
    INVALID = [
        Example("""
            import torch

            @torch.compile
            def clip_positive(x):
                y = x * 2
                if y.sum() > 0:
                    y = y - 1
                return y
        """, "clip_positive(torch.ones(8))"),
        Example("""
            import torch

            @torch.compile
            def gate(x, threshold: float = 0.5):
                return x if (x > threshold).any() else torch.zeros_like(x)
        """, "gate(torch.ones(8))"),
        Example("""
            import torch

            @torch.compile
            def shrink(x):
                while x.norm() > 1:
                    x = x / 2
                return x
        """, "shrink(torch.full((4,), 3.0))"),
    ]
    VALID = [
        Example("""
            import torch

            @torch.compile
            def clip_positive(x):
                y = x * 2
                return torch.where(y.sum() > 0, y - 1, y)
        """, "clip_positive(torch.ones(8))"),
        Example("""
            import torch

            @torch.compile
            def pad_to_even(x, mask=None):
                if x.shape[0] % 2 == 1 and x.dim() == 1:
                    x = torch.cat([x, x.new_zeros(1)])
                if mask is not None:
                    x = x * mask
                if x.dtype == torch.float16 or x.is_cuda:
                    x = x.float()
                return x
        """, "pad_to_even(torch.ones(7))"),
        Example("""
            import torch

            @torch.compile
            def check(x):
                assert x.sum() > 0, "needs positive input"
                return x + 1
        """, "check(torch.ones(4))"),
    ]

    def _check(self, test: cst.BaseExpression) -> None:
        for operand in _truth_operands(test):
            if self.tensors.kind(operand) == TENSOR:
                self.report(operand, expr=self.ctx_code(operand))
                return

    def ctx_code(self, node: cst.CSTNode) -> str:
        code = cst.Module([]).code_for_node(node)
        return code if len(code) <= 60 else code[:57] + "..."

    def visit_If(self, node: cst.If) -> None:
        self._check(node.test)

    def visit_While(self, node: cst.While) -> None:
        self._check(node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._check(node.test)


@register
class TorchAssertOnTensor(TorchRule):
    """Checks for `torch._assert(cond, msg)` where `cond` is a tensor value."""
    code = "DYN103"
    name = "torch-assert-on-tensor"
    message = "`torch._assert` on a tensor value breaks the graph"
    fix = "Use a plain `assert` (Dynamo rewrites it to `torch._assert_async`) or `torch._check` for sizes"
    gb_types = ("Data dependent operator",)
    why = """
        `torch._assert` with a tensor condition needs the tensor's value on the host while tracing, so
        Dynamo breaks the graph (`Data dependent operator`). A plain `assert` on the same condition is
        traced into the graph as an asynchronous assertion and does not break.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def normalise(x):
            torch._assert(x.sum() > 0, "empty input")
            return x / x.sum()
    """, "normalise(torch.ones(4))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def normalise(x):
            assert x.sum() > 0, "empty input"
            return x / x.sum()
    """, "normalise(torch.ones(4))")]

    def visit_Call(self, node: cst.Call) -> None:
        if self.call_name(node) == "torch._assert" and node.args and self.tensors.is_tensor(node.args[0].value):
            self.report(node)
