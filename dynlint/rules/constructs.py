"""DYN609-DYN610: Python constructs Dynamo does not trace over values it holds: a class built in traced code, and
Python's ordering (`min`/`max` with a key, `sorted`) over tensors."""
from __future__ import annotations

import libcst as cst

from dynlint.analysis.tensors.kinds import TENSOR, TENSORS
from dynlint.analysis.tensors.syntax import keyword_arg
from dynlint.analysis.tensors.torch_api import TENSOR_METHODS
from dynlint.linter.rule import Example, register
from dynlint.rules.common import TorchRule


@register
class ClassDefinedInCompiledCode(TorchRule):
    """Checks for `class` statements inside code torch.compile traces (a class, a dataclass or a named tuple
    defined in a function Dynamo traces)."""
    code = "DYN609"
    name = "class-defined-in-compiled-code"
    message = "class `{name}` is defined inside compiled code: Dynamo cannot trace building a class and breaks the graph"
    fix = "Define the class at module level (it is the same class on every call) and only instantiate it here"
    gb_types = ("Invalid call to __build_class__", "Missing bytecode handler")
    why = """
        A `class` statement is a call to the builtin `__build_class__`, which runs the class body and makes a
        new type object on every call. Dynamo does not model that call: it ends the graph before the statement
        and resumes after it (`Invalid call to __build_class__`), on every call of the function. The class body
        then runs as a frame of its own, which starts at the first decorator; where it names torch (a dataclass
        field `loss: torch.Tensor`) Dynamo tries to trace that frame, fails on its first instruction
        (`Missing bytecode handler`, `LOAD_NAME`) and skips it: the finding's span runs from the first decorator
        to the class's name. Classes defined at module level are created once, at import, and Dynamo traces
        their instantiation and methods.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def scaled(x):
            class Box:
                def __init__(self, value):
                    self.value = value

            return Box(x * 2).value + 1
    """, "scaled(torch.ones(4))"), Example("""
        import dataclasses

        import torch

        @torch.compile
        def step(pred, target):
            @dataclasses.dataclass
            class StepOutput:
                loss: torch.Tensor

            return StepOutput((pred - target).abs().mean())
    """, "step(torch.ones(4), torch.zeros(4))")]
    VALID = [Example("""
        import torch

        class Box:
            def __init__(self, value):
                self.value = value

        @torch.compile
        def scaled(x):
            return Box(x * 2).value + 1
    """, "scaled(torch.ones(4))")]

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        # the innermost def or class around it is a def: a class nested in a local class is built with it
        around = next((p for p in reversed(self.ctx.parents) if isinstance(p, (cst.FunctionDef, cst.ClassDef))),
                      None)
        if isinstance(around, cst.FunctionDef) and not self.in_untraced_function():
            # the class body is a frame of its own, which starts at the first decorator: Dynamo, tracing it when
            # it names torch, fails there (`LOAD_NAME`) and skips it; the build itself breaks at the `class` line
            start = node.decorators[0] if node.decorators else node.name
            self.report(start, name=node.name.value, through=node.name)


@register
class OrderingOverTensors(TorchRule):
    """Checks for `min(...)` / `max(...)` with a `key=` over tensors, and for `sorted(...)` / `list.sort()` whose
    sort keys are tensors (the elements themselves, or what the key function returns)."""
    code = "DYN610"
    name = "ordering-over-tensors"
    message = "`{call}` orders tensors in Python: Dynamo cannot trace it and breaks the graph"
    fix = "Compare as tensors: stack the values, take `argmax` / `argmin` / `torch.sort` of the keys and gather with `index_select`; or order by a size (`key=lambda t: t.shape[0]`), which Dynamo knows"
    gb_types = ("invalid call to builtin op handler", "sort with non-constant keys")
    why = """
        Dynamo runs `min` and `max` with a `key=` function only when every argument is a Python constant it
        can fold; over a list or dict holding tensors the call has no handler, whatever the key returns
        (`invalid call to builtin op handler`). `sorted` and `list.sort` it traces while the sort keys are
        Python values (sizes, strings), but a tensor key would have to be compared on the host
        (`sort with non-constant keys`). Either way the graph ends at the call.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def loudest(x: torch.Tensor):
            parts = [x, x * 2, x - 1]
            return max(parts, key=lambda t: t.abs().sum()) + 1
    """, "loudest(torch.ones(4))"), Example("""
        import torch

        @torch.compile
        def by_energy(x: torch.Tensor):
            parts = [x, x * 2, x - 1]
            ranked = sorted(parts, key=lambda t: t.pow(2).sum())
            return ranked[0] + 1
    """, "by_energy(torch.ones(4))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def loudest(x: torch.Tensor):
            parts = torch.stack([x, x * 2, x - 1])
            best = parts.abs().sum(dim=1).argmax().reshape(1)
            return parts.index_select(0, best)[0] + 1
    """, "loudest(torch.ones(4))"), Example("""
        import torch

        @torch.compile
        def longest_first(x: torch.Tensor):
            parts = [x, x[:2]]
            ranked = sorted(parts, key=lambda t: t.shape[0], reverse=True)
            return ranked[0] + 1
    """, "longest_first(torch.ones(4))")]

    def visit_Call(self, node: cst.Call) -> None:
        name = self.call_name(node)
        key = keyword_arg(node, "key")
        positional = [a for a in node.args if a.keyword is None]
        if name in ("min", "max") and key is not None and positional:
            if any(a.star and self._holds_tensors(a.value) for a in positional) or (
                    len(positional) == 1 and self._holds_tensors(positional[0].value)) or \
                    (len(positional) > 1 and any(self.tensors.kind(a.value) == TENSOR for a in positional)):
                self.report(node, call=f"{name}(..., key=...)")
        elif name == "sorted" and positional and not positional[0].star:
            if self._tensor_keys(positional[0].value, key):
                self.report(node, call="sorted(...)")
        elif self.method_name(node) == "sort" and not positional and \
                self.tensors.kind(self.receiver(node)) == TENSORS and self._tensor_keys(self.receiver(node), key):
            self.report(node, call=".sort(...)")

    def _holds_tensors(self, node: cst.BaseExpression) -> bool:
        """A list or tuple of tensors, a dict with a tensor value (or its `.items()`, `.values()`, `.keys()`)."""
        if self.tensors.kind(node) == TENSORS:
            return True
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and not node.args and \
                node.func.attr.value in ("items", "values", "keys"):
            node = node.func.value
        values = self.tensors.assigned_values(node.value) if isinstance(node, cst.Name) else [node]
        return bool(values) and all(isinstance(v, cst.Dict) for v in values) and any(
            isinstance(e, cst.DictElement) and self.tensors.kind(e.value) == TENSOR
            for v in values for e in v.elements)

    def _tensor_keys(self, items: cst.BaseExpression, key) -> bool:
        """Sorting `items` by `key` compares tensors: tensors sorted by themselves, or a key that returns a
        tensor method's result of the element (`lambda t: t.sum()`)."""
        if self.tensors.kind(items) != TENSORS:
            return False
        if key is None:
            return True
        if not (isinstance(key, cst.Lambda) and len(key.params.params) == 1):
            return False
        param, body = key.params.params[0].name.value, key.body
        while isinstance(body, cst.Call) and isinstance(body.func, cst.Attribute):
            if body.func.attr.value not in TENSOR_METHODS:
                return False
            if isinstance(body.func.value, cst.Name):
                return body.func.value.value == param
            body = body.func.value
        return False

