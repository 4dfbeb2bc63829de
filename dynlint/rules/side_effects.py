"""DYN3xx: Python side effects — printing, logging, I/O and other calls Dynamo cannot put in a graph."""
from __future__ import annotations

import libcst as cst

from dynlint.rules.base import Example, register
from dynlint.rules.common import TorchRule

BUILTIN = "Failed to trace builtin operator"
SKIPPED = "Attempted to call function marked as skipped"
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

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "print" and self.call_name(node) == "print":
            self.report(node)


@register
class LoggingInCompiledCode(TorchRule):
    """Checks for logging calls (`logger.info`, `logging.warning`, `logger.warning_once`, ...) inside traced code."""
    code = "DYN302"
    name = "logging-in-compiled-code"
    message = "logging call `{call}` breaks the graph, even when the level is disabled"
    fix = "Log outside the compiled function, or guard with `if not torch.compiler.is_compiling():`"
    gb_types = ("logging.Logger method not supported for non-export cases", "Unsupported python_type() call",
                "Unsupported method call", "Unresolved GetAttrVariable comparison", SKIPPED)
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
            self.report(node, call=cst.Module([]).code_for_node(func))


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

    def visit_Call(self, node: cst.Call) -> None:
        if self.call_name(node) in ("warnings.warn", "warnings.warn_explicit"):
            self.report(node)
