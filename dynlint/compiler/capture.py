"""Collect every graph break and recompile Dynamo logs while a block of code runs.

    with Collector(is_user) as c:
        torch.compile(fn, backend=...)(*args)
    c.graph_breaks, c.recompiles, c.warnings

The `graph_breaks` artifact log is the only source that covers every break kind (Data-dependent branching
included) and whole-frame skips: measured on torch 2.13 and 2.11, `torch._dynamo.explain` words data-dependent
branches without their gb_type and `counters["graph_break"]` misses them. The pitfalls the handler works around
(loggers that do not propagate, duplicate breaks logged without their traceback, a break located in a library
frame) are said where it handles them; tests/test_compiler.py runs it against real Dynamo.
"""
from __future__ import annotations

import logging
from dataclasses import replace
from typing import Callable, List, Optional

import torch
import torch._dynamo

from dynlint.compiler import compat
from dynlint.compiler.logparse import is_recompile_limit_warning, parse_graph_break, parse_recompile
from dynlint.compiler.records import GraphBreak, Recompile
from dynlint.compiler.registry import load_gb_ids


class Collector(logging.Handler):
    """A logging handler on "torch._dynamo" that turns the artifact logs into records.

    is_user(path): whether a file belongs to the user's project; a break's location is the innermost
    traceback frame for which it holds (Dynamo's own location is often a library such as logging/__init__.py).
    """

    def __init__(self, is_user: Callable[[str], bool]):
        super().__init__(logging.DEBUG)
        self.is_user = is_user
        self.gb_ids = load_gb_ids()
        self.graph_breaks: List[GraphBreak] = []
        self.recompiles: List[Recompile] = []
        self.warnings: List[str] = []
        self.hit_recompile_limit = False
        self._logger = logging.getLogger("torch._dynamo")
        self._muted: List[logging.Handler] = []
        self._saved_env: Optional[str] = None

    def emit(self, record: logging.LogRecord) -> None:
        try:
            msg = record.getMessage()
            if record.name.endswith("__graph_breaks"):     # torch._dynamo.symbolic_convert.__graph_breaks
                self.graph_breaks.append(self._locate_duplicate(parse_graph_break(msg, self.is_user, self.gb_ids)))
            elif record.name.endswith("__recompiles"):     # torch._dynamo.guards.__recompiles
                parsed = parse_recompile(msg)
                if parsed is not None:
                    self.recompiles.append(parsed)
            elif record.levelno >= logging.WARNING:
                self.warnings.append(msg)
                self.hit_recompile_limit |= is_recompile_limit_warning(msg)
        except Exception:        # a format we cannot parse must not break the user's run
            self.handleError(record)

    def _locate_duplicate(self, brk: GraphBreak) -> GraphBreak:
        """A repeated break comes without its traceback; when Dynamo located it in a library, take the user
        location from the first report of the same break (same gb_types, same reported location)."""
        if not brk.duplicate or brk.path:
            return brk
        for earlier in self.graph_breaks:
            if earlier.path and (earlier.gb_types, earlier.reported_path, earlier.reported_line) == (
                    brk.gb_types, brk.reported_path, brk.reported_line):
                return replace(brk, path=earlier.path, line=earlier.line, function=earlier.function)
        return brk

    def __enter__(self) -> "Collector":
        self._saved_env = compat.enable_logs()
        # Registered torch loggers have propagate=False: a handler on "torch" or the root logger sees nothing.
        # set_logs() also installs stderr handlers; mute them so the user's console stays clean.
        self._muted = list(self._logger.handlers)
        for handler in self._muted:
            self._logger.removeHandler(handler)
        self._logger.addHandler(self)
        torch._dynamo.reset()
        compat.reset_graph_break_dup_checker()    # otherwise a repeated break comes without its traceback
        return self

    def __exit__(self, *exc_info) -> bool:
        self._logger.removeHandler(self)
        for handler in self._muted:
            self._logger.addHandler(handler)
        compat.restore_logs(self._saved_env)
        return False
