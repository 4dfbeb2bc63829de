"""Helpers shared by the torch rules: the tensor analysis, call-name matching, and the severity
escalation Dynamo applies to a break inside a loop, `try` or `with` (it skips the whole function)."""
from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from dynlint.rules.base import Rule
from dynlint.rules.tensors import Tensors

LOOP_SKIP = "graph break in loop"
CONTEXT_SKIP = "Graph break under GenericContextWrappingVariable"
# Context managers Dynamo traces natively: a break under them is an ordinary break.
TRACED_CONTEXTS = ("torch.",)


class TorchRule(Rule):
    """A rule about code torch.compile traces."""

    @property
    def tensors(self) -> Tensors:
        return Tensors.of(self.ctx)

    def call_name(self, node: cst.Call) -> Optional[str]:
        """Qualified name of the called function (`F.relu(x)` -> `torch.nn.functional.relu`)."""
        return self.ctx.qualify(node.func)

    def method_name(self, node: cst.Call) -> Optional[str]:
        return node.func.attr.value if isinstance(node.func, cst.Attribute) else None

    def receiver(self, node: cst.Call) -> Optional[cst.CSTNode]:
        return node.func.value if isinstance(node.func, cst.Attribute) else None

    def report(self, node: cst.CSTNode, message: Optional[str] = None, **fmt) -> None:
        message = message or self.message.format(**fmt)
        gb_types: Sequence[str] = self.gb_types
        if not self.recompiles and self.scope == "region":
            where = self._whole_frame_skip(node)
            if where:
                kind, extra = where
                message += f" — inside {kind}, so Dynamo skips the whole function and runs it eagerly"
                gb_types = tuple(gb_types) + ((extra,) if extra else ())
        self.ctx.report(self, node, message, gb_types)

    def _whole_frame_skip(self, node: cst.CSTNode):
        """(description, extra gb_type) when a break at `node` makes Dynamo skip the frame."""
        parents = self.ctx.parents
        for block in reversed(self.ctx.blocks):
            if isinstance(block, (cst.For, cst.While)):
                header = block.iter if isinstance(block, cst.For) else block.test
                if node is header or any(p is header for p in parents):
                    continue       # the loop's own header is not in the loop body
                return ("a `for` loop" if isinstance(block, cst.For) else "a `while` loop"), LOOP_SKIP
            if isinstance(block, cst.Try):
                return "a `try` block", None
            if isinstance(block, cst.With):
                names = [self.ctx.qualify(i.item.func if isinstance(i.item, cst.Call) else i.item) or ""
                         for i in block.items]
                if all(n.startswith(TRACED_CONTEXTS) for n in names):
                    continue
                if any(node is i.item or any(p is i.item for p in parents) for i in block.items):
                    continue
                return "a `with` block", CONTEXT_SKIP
        return None
