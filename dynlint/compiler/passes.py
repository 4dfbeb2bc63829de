"""Graph passes dynlint's backend can run on each captured FX graph before Inductor lowers it.

A pass is any object with a `name` and `__call__(gm) -> int` that rewrites `gm` in place and returns how
many nodes it removed or rewrote. Passes run in the order given and are all off by default; a pass must
keep every output equal to eager (the verify run checks this on the user's examples).
"""
from __future__ import annotations

from typing import Dict, Optional, Protocol, Sequence, Tuple, Type

import torch
import torch.fx


class GraphPass(Protocol):
    name: str

    def __call__(self, gm: torch.fx.GraphModule) -> int: ...


# Tensor methods that return `self` unchanged when the tensor already has the dtype they convert to.
_CASTS = {
    "float": torch.float32, "double": torch.float64, "half": torch.float16, "bfloat16": torch.bfloat16,
    "int": torch.int32, "long": torch.int64, "short": torch.int16, "char": torch.int8, "byte": torch.uint8,
    "bool": torch.bool,
}


class RemoveNoOpCopies:
    """Drop `.contiguous()`, `.to(dtype)`, `.float()`-style casts and `.type_as(y)` that are no-ops.

    In eager each of these returns `self` when the tensor is already contiguous / of that dtype, so replacing
    the node by its input is exact (same values, same aliasing). Whether it is a no-op is read from the
    FakeTensor Dynamo stored in node.meta; nodes with symbolic sizes or strides are left alone, because
    deciding contiguity there would add guards.
    """

    name = "remove-noop-copies"

    def __call__(self, gm: torch.fx.GraphModule) -> int:
        removed = 0
        for node in list(gm.graph.nodes):
            if node.op == "call_method" and node.args and self._is_noop(node):
                node.replace_all_uses_with(node.args[0])
                gm.graph.erase_node(node)
                removed += 1
        if removed:
            gm.graph.lint()
            gm.recompile()
        return removed

    def _is_noop(self, node: torch.fx.Node) -> bool:
        source = node.args[0]
        value = _static_tensor(source)
        if value is None:
            return False
        method, args, kwargs = node.target, node.args[1:], dict(node.kwargs)
        if method == "contiguous":
            memory_format = kwargs.pop("memory_format", args[0] if args else torch.contiguous_format)
            return not kwargs and len(args) <= 1 and memory_format == torch.contiguous_format \
                and value.is_contiguous()
        if method in _CASTS:
            return not args and not kwargs and value.dtype == _CASTS[method]
        if method == "to":
            dtype = kwargs.pop("dtype", args[0] if len(args) == 1 else None)
            return not kwargs and len(args) <= 1 and isinstance(dtype, torch.dtype) and value.dtype == dtype
        if method == "type_as" and len(args) == 1 and not kwargs and isinstance(args[0], torch.fx.Node):
            other = _static_tensor(args[0])
            return other is not None and (other.dtype, other.device) == (value.dtype, value.device)
        return False


def _static_tensor(node) -> Optional[torch.Tensor]:
    """The example value of an FX node when it is a tensor with concrete sizes and strides."""
    if not isinstance(node, torch.fx.Node):
        return None
    value = node.meta.get("example_value", node.meta.get("val"))
    if not isinstance(value, torch.Tensor) or value.layout != torch.strided:
        return None
    if not all(isinstance(d, int) for d in (*value.shape, *value.stride())):
        return None
    return value


PASSES: Dict[str, Type] = {RemoveNoOpCopies.name: RemoveNoOpCopies}


def make_passes(names: Sequence[str]) -> Tuple[GraphPass, ...]:
    """Instantiate passes by name; an unknown name is a ValueError that lists the known ones."""
    unknown = [n for n in names if n not in PASSES]
    if unknown:
        raise ValueError(f"unknown graph pass {', '.join(unknown)}; known: {', '.join(sorted(PASSES))}")
    return tuple(PASSES[n]() for n in names)
