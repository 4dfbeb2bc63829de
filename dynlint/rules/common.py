"""Helpers shared by the torch rules: the tensor analysis, call-name matching (`NamedCallRule`), and the severity
escalation Dynamo applies to a break inside a loop, `try` or `with` (it skips the whole function)."""
from __future__ import annotations

from typing import ClassVar, Optional, Sequence, Set

import libcst as cst

from dynlint.analysis.names import COMPILING_FALSE, COMPILING_TRUE
from dynlint.analysis.regions import compiled_in
from dynlint.analysis.tensors import Tensors
from dynlint.core.rule import Rule

LOOP_SKIP = "graph break in loop"
CONTEXT_SKIP = "Graph break under GenericContextWrappingVariable"
# gb_type strings rules name that only some torch releases have, with the release they were measured on.
# Every other gb_type a rule names must be in the installed torch's graph_break_registry.json
# (tests/test_rule_proofs.py checks both).
GB_TYPES_OF_RELEASE = {
    "2.13": frozenset({"Data pointer comparison", "repr() on tensor", "Unresolved GetAttrVariable comparison",
                       "Unsupported python_type() call", "Attempted to copy.deepcopy a tensor",
                       "requires_grad_() intermediate leaked as output",
                       "returning intermediate with requires_grad_()"}),
}
# Calls whose value Dynamo knows while tracing: branches on them are resolved, not traced.
# Context managers Dynamo traces natively: a break under them is an ordinary break.
TRACED_CONTEXTS = ("torch.",)


class TorchRule(Rule):
    """A rule about code torch.compile traces.

    `fullgraph_raises`: whether `torch.compile(fullgraph=True)` turns the predicted break into an error
    (False where fullgraph silently enables scalar / dynamic-shape capture instead: `.item()`, `nonzero`).
    DYN702 reads it; the proof test checks it against Dynamo.
    """
    fullgraph_raises: ClassVar[bool] = True

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

    def is_local(self, name: str) -> bool:
        """Whether `name` is bound in the current function (a parameter or an assignment)."""
        return self.tensors.is_local(name)

    def compiled_names(self) -> Set[str]:
        """Names in this file that hold compiled callables (`@torch.compile def f`, `m = torch.compile(...)`)."""
        return self.ctx.analysis(compiled_names)

    def in_untraced_function(self) -> bool:
        """Inside a function Dynamo does not trace although it is reached from a region (a custom op's body,
        an `allow_in_graph` function): Dynamo treats it as one opaque call."""
        for fn in self.ctx.functions:
            if isinstance(fn, cst.FunctionDef):
                for d in fn.decorators:
                    target = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
                    q = self.ctx.qualify(target) or ""
                    if q.startswith(NOT_TRACED_DECORATORS) or q.endswith((".register_fake", ".register_kernel",
                                                                           ".register_autograd")):
                        return True
        return False

    def dead_under_dynamo(self, node: cst.CSTNode) -> bool:
        """Inside a branch Dynamo never traces: `if not torch.compiler.is_compiling(): ...`, the body of
        `if torch.jit.is_scripting():`, the `else` of `if torch.compiler.is_compiling():`."""
        chain = list(self.ctx.parents) + [node]
        for parent, child in zip(chain, chain[1:]):
            if isinstance(parent, (cst.If, cst.IfExp)):
                value = self._value_under_dynamo(parent.test)
                if value is False and child is parent.body or value is True and child is parent.orelse:
                    return True
        return False

    def _value_under_dynamo(self, test: cst.BaseExpression) -> Optional[bool]:
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self._value_under_dynamo(test.expression)
            return None if inner is None else not inner
        if isinstance(test, cst.Call) and not test.args:
            name = self.ctx.qualify(test.func) or ""
            if name in COMPILING_TRUE:
                return True
            if name in COMPILING_FALSE:
                return False
        return None

    def report(self, node: cst.CSTNode, message: Optional[str] = None, **fmt) -> None:
        if self.scope == "region" and (self.in_untraced_function() or self.dead_under_dynamo(node)):
            return
        message = message or self.format_message(**fmt)
        gb_types: Sequence[str] = self.gb_types
        if not self.recompiles and self.scope == "region":
            where = self._whole_frame_skip(node)
            if where:
                kind, extra = where
                message += f" — inside {kind}, so Dynamo skips the whole function and runs it eagerly"
                gb_types = tuple(gb_types) + ((extra,) if extra else ())
        self.ctx.report(self, node, message, gb_types, autofix=self.plan_fix(node))

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


def _calls_listed(name: str, exact, prefixes=()) -> bool:
    return name in exact or name.startswith(tuple(prefixes))


class NamedCallRule(TorchRule):
    """A rule that reports calls of listed (qualified) names: `exact` names and every function of the
    modules in `prefixes`, minus `allowed`."""
    exact: frozenset = frozenset()
    prefixes: tuple = ()
    allowed: frozenset = frozenset()

    def visit_Call(self, node: cst.Call) -> None:
        name = self.call_name(node)
        if not name or name in self.allowed:
            return
        if isinstance(node.func, cst.Name) and name == node.func.value and name not in self.exact:
            return                                   # a local function that happens to share a name
        if _calls_listed(name, self.exact, self.prefixes):
            self.report(node, call=name)


# ---- helpers shared by several families ---------------------------------------------------------------
NOT_TRACED_DECORATORS = ("torch.library.custom_op", "torch.library.register_fake", "torch.library.impl_abstract",
                         "torch.library.register_kernel", "torch.library.impl", "torch.compiler.allow_in_graph",
                         "torch._dynamo.allow_in_graph")


def source_of(node: cst.CSTNode, limit: int = 60) -> str:
    """Short source text of a node, for messages."""
    code = " ".join(cst.Module([]).code_for_node(node).split())
    return code if len(code) <= limit else code[:limit - 3] + "..."


def is_not(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not)


def truth_operands(test: cst.BaseExpression):
    """The expressions whose truth value Python asks for when `test` is a condition: `a and not b` -> a, b."""
    if isinstance(test, cst.BooleanOperation):
        yield from truth_operands(test.left)
        yield from truth_operands(test.right)
    elif is_not(test):
        yield from truth_operands(test.expression)
    else:
        yield test


def value_truth_operands(expr: cst.BaseExpression):
    """The operands whose truth Python asks for when `expr` is used as a value (`y = a or b` tests `a` only:
    `b` is returned as it is)."""
    if isinstance(expr, cst.BooleanOperation):
        yield from truth_operands(expr.left)
        yield from value_truth_operands(expr.right)
    elif is_not(expr):
        yield from truth_operands(expr.expression)


def call_args(node: cst.Call):
    """(positional argument values, {keyword: value})."""
    pos = [a.value for a in node.args if a.keyword is None and not a.star]
    kw = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
    return pos, kw


def compiled_names(ctx) -> Set[str]:
    """An analysis (ctx.analysis): the names of the unit's file that hold compiled callables."""
    return compiled_in(ctx.index) if ctx.index else set()
