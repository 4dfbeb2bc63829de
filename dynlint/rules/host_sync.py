"""DYN2xx: host syncs and scalar extraction — pulling tensor values into Python."""
from __future__ import annotations

import libcst as cst

from dynlint.rules.base import Example, register
from dynlint.rules.common import TorchRule
from dynlint.rules.tensors import TENSOR, WEAK

ITEM = "Unsupported Tensor.item() call with capture_scalar_outputs=False"


@register
class TensorItemCall(TorchRule):
    """Checks for `.item()` on a tensor inside traced code."""
    code = "DYN201"
    name = "tensor-item-call"
    message = "`.item()` copies a tensor value to the host and breaks the graph"
    fix = "Keep the value as a 0-d tensor (drop `.item()`), or set `torch._dynamo.config.capture_scalar_outputs = True`"
    gb_types = (ITEM,)
    why = """
        `.item()` needs the concrete value, which does not exist while Dynamo traces symbolically. With the
        default `capture_scalar_outputs=False` Dynamo ends the graph there and resumes afterwards: a host
        sync on every call and a split graph. Arithmetic on the 0-d tensor itself stays in the graph.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def scale(x):
            peak = x.abs().max().item()
            return x / peak
    """, "scale(torch.arange(1.0, 5.0))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def scale(x):
            peak = x.abs().max()
            return x / peak
    """, "scale(torch.arange(1.0, 5.0))")]

    def visit_Call(self, node: cst.Call) -> None:
        if self.method_name(node) == "item" and not node.args and \
                self.tensors.kind(self.receiver(node)) in (TENSOR, WEAK):
            self.report(node)


@register
class PythonScalarOfTensor(TorchRule):
    """Checks for `float(t)`, `int(t)` and `bool(t)` on a tensor inside traced code."""
    code = "DYN202"
    name = "python-scalar-of-tensor"
    message = "`{fn}()` of a tensor copies its value to the host and breaks the graph"
    fix = "Keep tensor arithmetic on the tensor (e.g. `t.to(torch.float32)`), or compare with tensor ops"
    gb_types = (ITEM,)
    why = """
        `float(t)`, `int(t)` and `bool(t)` call `t.item()` under the hood: Dynamo cannot produce a Python
        number from a symbolic tensor, so it breaks the graph (`Tensor.item()`). Converting sizes
        (`int(x.shape[0])`) is fine.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def temperature(logits, t):
            return logits / float(t.mean())
    """, "temperature(torch.ones(4), torch.full((2,), 2.0))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def temperature(logits, t):
            n = int(logits.shape[0])
            return logits / t.mean() * n
    """, "temperature(torch.ones(4), torch.full((2,), 2.0))")]

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value in ("float", "int", "bool") and \
                len(node.args) == 1 and self.tensors.is_tensor(node.args[0].value):
            self.report(node, fn=node.func.value)


@register
class TensorTolistCall(TorchRule):
    """Checks for `.tolist()` on a tensor inside traced code."""
    code = "DYN203"
    name = "tensor-tolist-call"
    message = "`.tolist()` copies a tensor to a Python list and breaks the graph"
    fix = "Keep the data as a tensor and use tensor ops; index with tensors instead of Python lists"
    gb_types = ("Tensor.tolist() with non-integer tensor", ITEM)
    why = """
        `.tolist()` materialises every element on the host. For floating-point tensors Dynamo always breaks
        (`Tensor.tolist() with non-integer tensor`), even with scalar capture on; integer tensors break
        unless `capture_scalar_outputs=True`. `torch.tensor(t.tolist())` round-trips through Python for
        nothing: use `t.clone()`.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def rebuild(x):
            return torch.tensor(x.tolist()) * 2
    """, "rebuild(torch.ones(3))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def rebuild(x):
            return x.clone() * 2
    """, "rebuild(torch.ones(3))")]

    def visit_Call(self, node: cst.Call) -> None:
        if self.method_name(node) == "tolist" and not node.args and \
                self.tensors.kind(self.receiver(node)) in (TENSOR, WEAK):
            self.report(node)


@register
class DataPtrComparison(TorchRule):
    """Checks for comparisons of `data_ptr()` values inside traced code."""
    code = "DYN204"
    name = "data-ptr-comparison"
    message = "comparing `data_ptr()` values breaks the graph"
    fix = "Compare tensors by identity (`a is b`) or track aliasing outside the compiled region"
    gb_types = ("Data pointer comparison",)
    why = """
        Fake tensors used while tracing have no real storage, so Dynamo cannot compare their addresses and
        breaks the graph (`Data pointer comparison`). Reading `x.data_ptr()` alone does not break.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def maybe_copy(x, y):
            if x.data_ptr() == y.data_ptr():
                return x.clone()
            return x + y
    """, "maybe_copy(torch.ones(3), torch.ones(3))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def maybe_copy(x, y):
            if x is y:
                return x.clone()
            return x + y
    """, "maybe_copy(torch.ones(3), torch.ones(3))")]

    def visit_Comparison(self, node: cst.Comparison) -> None:
        sides = [node.left] + [c.comparator for c in node.comparisons]
        if sum(isinstance(s, cst.Call) and self.method_name(s) == "data_ptr" for s in sides) >= 2:
            self.report(node)
