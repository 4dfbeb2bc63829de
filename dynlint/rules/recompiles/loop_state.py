"""A Python number a loop changes, carried across the graph break in the loop's condition (DYN519)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from dynlint.analysis.guards import effect
from dynlint.analysis.names import SKIPS_FRAME
from dynlint.analysis.tensors import TENSOR, WEAK
from dynlint.linter.rule import Example, register
from dynlint.linter.walker import descendants
from dynlint.rules.common import TorchRule
from dynlint.rules.recompiles.host_values import GUARD, read_kind


def _counted(node: cst.BaseSmallStatement) -> Optional[str]:
    """The name a statement counts: `n += k`, `n -= k`, `n = n + k`, `n = n - k`."""
    if isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name) and \
            isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)):
        return node.target.value
    if not (isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name)):
        return None
    name, value = node.targets[0].target.value, node.value
    counts = isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Add, cst.Subtract)) and \
        isinstance(value.left, cst.Name) and value.left.value == name
    return name if counts else None


def _an_int(node: cst.BaseExpression) -> bool:
    """A Python int: a literal, `len(...)`, a size (`x.shape[0]`, `x.size(0)`), or `+`/`-` of such."""
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract)):
        return _an_int(node.left) and _an_int(node.right)
    if isinstance(node, cst.Call):
        func = node.func
        return isinstance(func, cst.Name) and func.value == "len" or \
            isinstance(func, cst.Attribute) and func.attr.value == "size" and len(node.args) == 1
    return isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute) and \
        node.value.attr.value == "shape"


@register
class LoopStateGuardedAfterBreak(TorchRule):
    """Checks for a Python int that a `while` loop changes on every iteration (`steps += 1`) when the loop's
    condition breaks the graph (`while x.norm() > tol:`): Dynamo resumes in the loop's body as a frame of its
    own at every iteration, with the loop's locals as inputs, and guards the counter's value where the body
    first computes with it."""
    code = "DYN519"
    reads_breaks = True
    name = "loop-state-guarded-after-break"
    message = ("`{name}` changes on every iteration of the loop whose condition breaks the graph at line {line}: "
               "Dynamo resumes the loop's body as a frame of its own at each iteration, and guards `{name}`'s "
               "value here: {effect}")
    fix = ("Keep the count in a tensor (`steps = torch.zeros((), dtype=torch.long)`, `steps += 1`), or remove the "
           "break in the condition (a fixed number of iterations with a mask, `torch.while_loop`)")
    recompiles = True
    severity = "note"
    why = """
        A `while` loop whose condition is a tensor's value (`while x.norm() > tol:`) breaks the graph at the
        test: Dynamo compiles the code up to it, runs the test, and resumes at the branch it takes, the loop's
        body, in a frame of its own whose inputs are the live locals. The body ends by jumping back to the test,
        which breaks again, and the next iteration enters the same resumed frame with the new locals. A Python
        int the body changes (a counter) is specialised there: the second iteration fails its value guard where
        the body first computes with it, and compiles the body again with the value dynamic (once; docs/guards.md,
        "int local carried across a loop's break"). A body that only counts is guarded too when the test
        computes with tensors before its break (`while i < n and scores[i] < thr: i += 1`): the resumed frame
        runs on into the test, and that is a graph. A loop inside another loop is not resumed at all (a break
        in a loop skips the frame): nothing is guarded there.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def halve(x):
            steps = 0
            while x.abs().max() > 1.0:
                x = x * 0.5
                steps += 1
            return x, steps
    """, "halve(torch.full((4,), 8.0))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def halve(x):
            steps = torch.zeros((), dtype=torch.long)
            for _ in range(8):
                keep = x.abs().max() > 1.0
                x = torch.where(keep, x * 0.5, x)
                steps = steps + keep.long()
            return x, steps
    """, "halve(torch.full((4,), 8.0))")]

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.ints: Dict[Tuple[str, str], int] = {}          # (function, local) -> line of `n = <int>`
        self.lists: Dict[Tuple[str, str], int] = {}         # (function, local) -> line of `xs = [...]`
        self.open: List[_Loop] = []                         # the loops the walk is in, innermost last
        self.loops: List[_Loop] = []                        # every loop with counters

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or self.open:
            return
        target, value = node.targets[0].target, node.value
        pairs = [(target, value)]
        if isinstance(target, cst.Tuple) and isinstance(value, cst.Tuple) and \
                len(target.elements) == len(value.elements):     # `i, n = 0, len(xs)`
            pairs = [(t.value, v.value) for t, v in zip(target.elements, value.elements)]
        for name, made in pairs:
            if isinstance(name, cst.Name) and (isinstance(made, cst.List) or _an_int(made)):
                kind = self.lists if isinstance(made, cst.List) else self.ints
                kind[(self.ctx.qualname, name.value)] = self.ctx.position(node)[0]

    def visit_While(self, node: cst.While) -> None:
        counted = {name for stmt in _small_statements(node.body) for name in [_counted(stmt)] if name}
        line, _, end, _ = self.ctx.position(node.test)
        loop = _Loop(node, {n for n in counted if (self.ctx.qualname, n) in self.ints}, (line, end))
        # the resumed body runs on into the test, up to its break: tensor work there is a graph too
        loop.work = any(isinstance(n, (cst.Call, cst.BinaryOperation, cst.Subscript)) and
                        self.tensors.kind(n) in (TENSOR, WEAK) for n in descendants(node.test)) if counted else False
        self.open.append(loop)
        if loop.counters:
            self.loops.append(loop)

    def leave_While(self, node: cst.While) -> None:
        self.open.pop()

    def _body(self) -> Optional["_Loop"]:
        """The innermost open loop with counters, when the walk is in its body (not its test)."""
        loop = self.open[-1] if self.open else None
        return loop if loop is not None and loop.counters and any(p is loop.node.body for p in self.ctx.parents) \
            else None

    def visit_Name(self, node: cst.Name) -> None:
        loop = self._body()
        if loop is None or loop.read is not None:
            return
        parent = self.ctx.parents[-1] if self.ctx.parents else None
        if (self.ctx.qualname, node.value) in self.lists and isinstance(parent, cst.Attribute) and \
                parent.value is node and parent.attr.value in ("append", "extend", "insert"):
            loop.read = False           # a list the body grows: its length guard fails first, named there
            return
        if node.value not in loop.counters:
            return
        parent = self.ctx.parents[-1] if self.ctx.parents else None
        if (isinstance(parent, cst.AugAssign) and parent.target is node) or read_kind(self.ctx, node) == GUARD:
            loop.read = node            # the body's first computation with a counter: guarded here

    def _work(self, node: cst.CSTNode) -> None:
        loop = self._body()
        if loop is not None and not loop.work and self.tensors.kind(node) in (TENSOR, WEAK):
            loop.work = True            # the resumed body has a graph (Python alone compiles nothing)

    def visit_Call(self, node: cst.Call) -> None:
        self._work(node)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self._work(node)

    def finish(self, findings) -> None:
        breaks = [f for f in findings if f.gb_types and f.code != self.code]
        for loop in self.loops:
            at = next((b for b in breaks if loop.test[0] <= b.line <= loop.test[1]), None)
            if not loop.read or at is None or not loop.work or SKIPS_FRAME in at.message:
                continue
            self.ctx.report(self, loop.read, self.format_message(
                name=loop.read.value, line=at.line, effect=effect("int local carried across a loop's break")))


@dataclass
class _Loop:
    node: cst.While
    counters: Set[str]              # int locals set before the loop and counted in its body
    test: Tuple[int, int]           # the lines of its condition
    read: Optional[cst.Name] = None     # the first guarded read of a counter (False: a list's append first)
    work: bool = False


def _small_statements(node: cst.CSTNode):
    """The small statements of a block, nested blocks included (not nested functions or classes)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.BaseSmallStatement):
            yield n
        elif not isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            stack.extend(n.children)
