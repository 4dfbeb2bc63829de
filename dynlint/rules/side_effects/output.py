"""Output from traced code: `print`, logging, `warnings.warn`, writes to `sys.stdout` / `sys.stderr`, and tensors
formatted as text."""
from __future__ import annotations

import libcst as cst

from dynlint.analysis.tensors.kinds import TENSOR, TENSORS
from dynlint.analysis.tensors.torch_api import SEQUENCE_ANNOTATIONS, TENSOR_ANNOTATIONS
from dynlint.linter.rule import Example, FixExample, register
from dynlint.linter.walker import descendants
from dynlint.fixes.guards import guard_eager_only
from dynlint.rules.common import NamedCallRule, TorchRule, source_of
from dynlint.rules.side_effects.common import BUILTIN, SKIPPED, UNSUPPORTED_METHOD

LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log",
                         "warning_once", "info_once", "warning_advice", "debug_once"})
LOGGER_NAMES = frozenset({"logger", "log", "_logger", "LOGGER", "LOG", "_log", "logging"})


@register
class PrintInCompiledCode(TorchRule):
    """Checks for `print(...)` inside traced code."""
    code = "DYN301"
    name = "print-in-compiled-code"
    message = "`print()` is a side effect Dynamo cannot trace: it breaks the graph"
    fix = "Remove the print, guard it with `if not torch.compiler.is_compiling():`, or print outside the compiled function"
    gb_types = (BUILTIN, "repr() on tensor")
    why = """
        Printing writes to a stream, which cannot be captured in an FX graph. Dynamo ends the graph before
        the call, runs it eagerly, and resumes in a new graph (`Failed to trace builtin operator`);
        printing a tensor also forces its value to the host. Inside a loop the whole function falls back
        to eager.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def step(x):
            y = x.relu()
            print("activation mean", y.mean())
            return y * 2
    """, "step(torch.ones(4))")]
    VALID = [Example("""
        import torch

        @torch.compile
        def step(x):
            y = x.relu()
            return y * 2

        def run(x):
            y = step(x)
            print("activation mean", y.mean())
            return y
    """, "run(torch.ones(4))")]

    fix_safety = "safe"
    fix_title = ("Wraps the `print` statement in `if not torch.compiler.is_compiling():` (adding `import torch` if "
                 "needed): it still prints when the function runs eagerly, and Dynamo, which knows that test while "
                 "tracing, skips it without a break. When the print is the whole body of an `if` whose condition "
                 "has no side effects, the `if` goes under the guard too.")
    fix_note = "Unsafe when an argument calls user code (skipping it while compiling would skip its side effects)."
    FIX_EXAMPLES = [
        FixExample("""
            import torch

            @torch.compile
            def step(x):
                y = x.relu()
                print("activation mean", y.mean())
                return y * 2
        """, """
            import torch

            @torch.compile
            def step(x):
                y = x.relu()
                if not torch.compiler.is_compiling():
                    print("activation mean", y.mean())
                return y * 2
        """, "step(torch.ones(4))"),
        FixExample("""
            from torch import compile

            @compile
            def step(x, verbose: bool = False):
                y = x.relu()
                if verbose:  # debugging aid
                    print("activation mean", y.mean())
                return y * 2
        """, """
            import torch
            from torch import compile

            @compile
            def step(x, verbose: bool = False):
                y = x.relu()
                if not torch.compiler.is_compiling():
                    if verbose:  # debugging aid
                        print("activation mean", y.mean())
                return y * 2
        """, "step(torch.ones(4), True)"),
        FixExample("""
            import itertools

            import torch

            STEP = itertools.count()

            @torch.compile
            def step(x):
                print("step", next(STEP))
                return x * 2
        """, """
            import itertools

            import torch

            STEP = itertools.count()

            @torch.compile
            def step(x):
                if not torch.compiler.is_compiling():
                    print("step", next(STEP))
                return x * 2
        """, safety="unsafe"),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "print" and self.call_name(node) == "print":
            self.report(node, pattern="print")

    def autofix(self, node: cst.Call):
        return guard_eager_only(self.ctx, node, "the print")


@register
class LoggingInCompiledCode(TorchRule):
    """Checks for logging calls (`logger.info`, `logging.warning`, `logger.warning_once`, ...) inside traced code."""
    code = "DYN302"
    name = "logging-in-compiled-code"
    message = "logging call `{call}` breaks the graph, even when the level is disabled"
    fix = "Log outside the compiled function, or guard with `if not torch.compiler.is_compiling():`"
    gb_types = ("logging.Logger method not supported for non-export cases", "Unsupported python_type() call",
                "Unsupported method call", "Unresolved GetAttrVariable comparison", SKIPPED)
    fix_safety = "safe"
    fix_title = ("Wraps the logging statement in `if not torch.compiler.is_compiling():`: it still logs when the "
                 "function runs eagerly and is skipped, without a break, while Dynamo traces. When it is the whole "
                 "body of an `if` whose condition has no side effects, the `if` goes under the guard too (so a "
                 "check like `if not torch.isfinite(loss):` stops breaking the graph as well).")
    fix_note = "Unsafe when an argument calls user code (skipping it while compiling would skip its side effects)."
    FIX_EXAMPLES = [
        FixExample("""
            import logging

            import torch

            logger = logging.getLogger(__name__)

            @torch.compile
            def step(x):
                y = x * 2
                logger.info("step done")
                return y + 1
        """, """
            import logging

            import torch

            logger = logging.getLogger(__name__)

            @torch.compile
            def step(x):
                y = x * 2
                if not torch.compiler.is_compiling():
                    logger.info("step done")
                return y + 1
        """, "step(torch.ones(4))"),
        FixExample("""
            import logging

            import torch
            import torch.nn.functional as F

            logger = logging.getLogger(__name__)

            @torch.compile
            def loss_fn(logits, y):
                loss = F.cross_entropy(logits, y)
                # report, but keep training
                if not torch.isfinite(loss):
                    logger.warning("non-finite loss")
                return loss
        """, """
            import logging

            import torch
            import torch.nn.functional as F

            logger = logging.getLogger(__name__)

            @torch.compile
            def loss_fn(logits, y):
                loss = F.cross_entropy(logits, y)
                # report, but keep training
                if not torch.compiler.is_compiling():
                    if not torch.isfinite(loss):
                        logger.warning("non-finite loss")
                return loss
        """, "loss_fn(torch.randn(4, 3), torch.tensor([0, 1, 2, 0]))",
           "loss_fn(torch.full((4, 3), float('nan')), torch.tensor([0, 1, 2, 0]))"),
    ]
    why = """
        `logging.Logger` methods are not traceable. Dynamo breaks the graph at every logging call
        (`logging.Logger method not supported for non-export cases`), and a call whose level is disabled
        still breaks, because the level check itself is Python the tracer has to run.
    """
    INVALID = [Example("""
        import logging

        import torch

        logger = logging.getLogger(__name__)

        @torch.compile
        def step(x):
            y = x * 2
            logger.info("step done")
            return y + 1
    """, "step(torch.ones(4))")]
    VALID = [Example("""
        import logging

        import torch

        logger = logging.getLogger(__name__)

        @torch.compile
        def step(x):
            y = x * 2
            return y + 1

        def run(x):
            logger.info("step done")
            return step(x)
    """, "run(torch.ones(4))")]

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in LOG_METHODS:
            return
        recv = func.value
        q = self.ctx.qualify(recv) or ""
        ix = self.ctx.index
        is_logger = q == "logging" or q.startswith("logging.") or (
            isinstance(recv, cst.Name) and (recv.value in LOGGER_NAMES or
                                            ix.qualify(ix.assigned_calls.get(recv.value, "")).endswith(
                                                ("getLogger", "get_logger")))) or (
            isinstance(recv, cst.Attribute) and recv.attr.value in LOGGER_NAMES)
        if is_logger and q != "warnings":
            self.report(node, call=source_of(func))

    def autofix(self, node: cst.Call):
        return guard_eager_only(self.ctx, node, "the logging call")


@register
class WarningsWarnInCompiledCode(TorchRule):
    """Checks for `warnings.warn(...)` inside traced code."""
    code = "DYN303"
    name = "warnings-warn-in-compiled-code"
    message = "`warnings.warn()` is skipped by Dynamo: it breaks the graph"
    fix = "Warn once outside the compiled function (e.g. at construction time)"
    gb_types = (SKIPPED,)
    why = """
        Dynamo does not trace into the `warnings` module; the call is marked as skipped, so the graph ends
        there and resumes afterwards (`Attempted to call function marked as skipped`).
    """
    INVALID = [Example("""
        import warnings

        import torch

        @torch.compile
        def act(x):
            warnings.warn("act is deprecated")
            return torch.relu(x)
    """, "act(torch.ones(4))")]
    VALID = [Example("""
        import warnings

        import torch

        @torch.compile
        def act(x):
            return torch.relu(x)

        def deprecated_act(x):
            warnings.warn("act is deprecated")
            return act(x)
    """, "deprecated_act(torch.ones(4))")]

    fix_safety = "safe"
    fix_title = ("Wraps the `warnings.warn` statement in `if not torch.compiler.is_compiling():`: eager runs still "
                 "warn, and Dynamo skips the call without a break.")
    fix_note = "Unsafe when an argument calls user code (skipping it while compiling would skip its side effects)."
    FIX_EXAMPLES = [
        FixExample("""
            import warnings

            import torch

            @torch.compile
            def act(x):
                warnings.warn("act is deprecated")
                return torch.relu(x)
        """, """
            import warnings

            import torch

            @torch.compile
            def act(x):
                if not torch.compiler.is_compiling():
                    warnings.warn("act is deprecated")
                return torch.relu(x)
        """, "act(torch.ones(4))"),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if self.call_name(node) in ("warnings.warn", "warnings.warn_explicit"):
            self.report(node, pattern=self.call_name(node))

    def autofix(self, node: cst.Call):
        return guard_eager_only(self.ctx, node, "the warning")


@register
class StreamWriteInCompiledCode(NamedCallRule):
    """Checks for writes to `sys.stdout` / `sys.stderr` (`write`, `writelines`, `flush`) inside traced code."""
    code = "DYN311"
    name = "stream-write-in-compiled-code"
    message = "`{call}()` writes to a stream: Dynamo cannot trace it and breaks the graph"
    fix = "Write from the caller, after the compiled function returns"
    gb_types = (UNSUPPORTED_METHOD,)
    why = """
        Stream objects are C-level `TextIOWrapper`s; Dynamo does not support calling their methods
        (`Unsupported method call`) and breaks the graph, exactly like `print`.
    """
    INVALID = [Example("""
        import sys

        import torch

        @torch.compile
        def progress(x):
            y = x * 2
            sys.stderr.write("step\\n")
            return y + 1
    """, "progress(torch.ones(4))")]
    VALID = [Example("""
        import sys

        import torch

        @torch.compile
        def step(x):
            return x * 2 + 1

        def progress(x):
            y = step(x)
            sys.stderr.write("step\\n")
            return y
    """, "progress(torch.ones(4))")]
    prefixes = ("sys.stdout.", "sys.stderr.", "sys.__stdout__.", "sys.__stderr__.")


@register
class TensorFormattedAsString(TorchRule):
    """Checks for tensors turned into strings eagerly: `str(t)`, `repr(t)` and `"%s" % t`."""
    code = "DYN318"
    name = "tensor-formatted-as-string"
    message = "`{expr}` formats a tensor's values as text: Dynamo breaks the graph"
    fix = "Format outside the compiled function, or format shapes (`tuple(t.shape)`) rather than values"
    gb_types = (BUILTIN, "repr() on tensor", "torch.* op returned non-Tensor")
    why = """
        Printing a tensor's values needs the values. Dynamo cannot trace `str()` on a tensor (`Failed to
        trace builtin operator`) or `repr()` (`repr() on tensor`), and `%`-formatting one makes it skip the
        whole function (`torch.* op returned non-Tensor`). f-strings are formatted lazily and only break
        when the text is used, which print and logging calls report themselves.
    """
    INVALID = [Example("""
        import torch

        @torch.compile
        def described(x):
            y = x.softmax(-1)
            text = str(y)
            return y, text
    """, "described(torch.ones(4))"), Example("""
        import torch
        from typing import List

        @torch.compile
        def keyed(x, strides: List[List[torch.Tensor]]):
            key = str(strides)
            return x * len(key)
    """, "keyed(torch.ones(2), [[torch.tensor(4), torch.tensor(4)]])")]
    VALID = [Example("""
        import torch

        @torch.compile
        def described(x):
            y = x.softmax(-1)
            text = f"shape={tuple(y.shape)}"
            return y, text
    """, "described(torch.ones(4))")]

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value in ("str", "repr") and \
                self.call_name(node) in ("str", "repr") and len(node.args) == 1 and \
                (self.tensors.kind(node.args[0].value) in (TENSOR, TENSORS) or self._holds_tensors(node.args[0].value)):
            self.report(node, expr=source_of(node))     # (a container's text is its elements' text)

    def _holds_tensors(self, value: cst.BaseExpression) -> bool:
        """A parameter annotated as a container with tensors in it at any depth (`List[List[Tensor]]`,
        `Dict[str, Tensor]`); not `Optional[...]`, which may be None."""
        fn = self.ctx.functions[-1] if self.ctx.functions else None
        if not (isinstance(value, cst.Name) and isinstance(fn, cst.FunctionDef)):
            return False
        ann = next((p.annotation.annotation for p in list(fn.params.params) + list(fn.params.kwonly_params)
                    if p.name.value == value.value and p.annotation is not None), None)
        if not isinstance(ann, cst.Subscript) or \
                (self.ctx.qualify(ann.value) or "").rpartition(".")[2] not in SEQUENCE_ANNOTATIONS | {"Dict", "dict"}:
            return False
        names = [n for n in descendants(ann) if isinstance(n, (cst.Name, cst.Attribute))]
        return any((self.ctx.qualify(n) or "") in TENSOR_ANNOTATIONS for n in names)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if not isinstance(node.operator, cst.Modulo) or \
                not isinstance(node.left, (cst.SimpleString, cst.ConcatenatedString)):
            return
        right = node.right
        items = [e.value for e in right.elements] if isinstance(right, cst.Tuple) else [right]
        if any(self.tensors.kind(i) == TENSOR for i in items):
            self.report(node, expr=source_of(node))
