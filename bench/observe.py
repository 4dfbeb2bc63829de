"""Run a Python file under real TorchDynamo and record what it did: graph breaks, recompiles, errors,
warnings, compiled frames. Shared by the rule proofs (tests/test_rule_proofs.py) and the corpus scorer
(bench/accuracy.py).

    obs = observe("/tmp/example.py", ["f(torch.ones(4))"])
    obs.breaks, obs.recompiles, obs.error, obs.frames

`torch.compile` is patched while the file runs so that every compile uses the cheap "eager" backend
(Dynamo still traces, guards and breaks exactly as with Inductor; only code generation is skipped).
`fullgraph`/`dynamic` keep the values the code asks for unless `fullgraph=` overrides them.
Capture goes through `dynlint.compiler.Collector` (the graph_breaks / recompiles artifact logs).
"""
from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import sys
import warnings
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

_GUARD_SOURCE = re.compile(r"#\s*(\S+?):(\d+) in \S+")


@dataclass
class Observation:
    breaks: list = field(default_factory=list)              # dynlint.compiler.GraphBreak
    recompiles: list = field(default_factory=list)          # dynlint.compiler.Recompile
    # per recompile: the lines of the file on the call stack that triggered it (innermost first)
    recompile_calls: List[Tuple[int, ...]] = field(default_factory=list)
    # per break: the lines of the file on the Python stack while Dynamo traced it (the calls that led there)
    break_calls: List[Tuple[int, ...]] = field(default_factory=list)
    error: Optional[BaseException] = None
    warnings: List[Tuple[str, str, str, int]] = field(default_factory=list)   # (category, message, file, line)
    frames: int = 0                                        # frames Dynamo compiled (counters["frames"]["ok"])
    hit_recompile_limit: bool = False

    def break_lines(self, path: str) -> Dict[int, List[Tuple[str, ...]]]:
        """line -> gb_type chains of the breaks Dynamo located at that line of `path`."""
        out: Dict[int, List[Tuple[str, ...]]] = {}
        for b in self.breaks:
            if b.path and _same(b.path, path):
                out.setdefault(b.line, []).append(tuple(b.gb_types))
        return out

    def recompile_lines(self, path: str) -> List[set]:
        """Per recompile, the lines of `path` it points at: the source line of the failed guard (when Dynamo
        logs one) and the call that triggered it."""
        out = []
        for rc, calls in zip(self.recompiles, self.recompile_calls):
            lines = set(calls)
            if rc.failures:
                f = rc.failures[0]
                if f.line and f.path and _same_suffix(f.path, path):
                    lines.add(f.line)
                m = _GUARD_SOURCE.search(f.guard)           # a guard whose "# source # file:line" was not split
                if m and _same_suffix(m.group(1), path):
                    lines.add(int(m.group(2)))
            out.append(lines)
        return out


def _same(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _same_suffix(logged: str, path: str) -> bool:
    """Guard sources carry only the path's last ~40 characters."""
    logged = logged.lstrip(".")
    return os.path.realpath(path).endswith(logged) or _same(logged, path)


def _stack_lines(path: str) -> Tuple[int, ...]:
    """Lines of `path` on the Python stack, innermost first: the calls that led here."""
    frame = sys._getframe(1)
    real = os.path.realpath(path)
    out = []
    while frame is not None:
        if os.path.realpath(frame.f_code.co_filename) == real:
            out.append(frame.f_lineno)
        frame = frame.f_back
    return tuple(out)


@contextlib.contextmanager
def _cheap_compile(fullgraph: Optional[bool]):
    import torch

    original = torch.compile

    def compile(model=None, **kwargs):
        kwargs["backend"] = "eager"
        kwargs.pop("mode", None)
        kwargs.pop("options", None)
        if fullgraph is not None:
            kwargs["fullgraph"] = fullgraph
        return original(model, **kwargs) if model is not None else original(**kwargs)

    torch.compile = compile
    try:
        yield
    finally:
        torch.compile = original


def observe(path: str, calls: Sequence[str] = (), fullgraph: Optional[bool] = None,
            entry: Optional[str] = None) -> Observation:
    """Import `path` as a fresh module, then run `calls` (statements, in the module's namespace) or the
    callable named `entry`, recording what Dynamo does."""
    import torch
    import torch._dynamo
    from torch._dynamo.utils import counters

    from dynlint.compiler import Collector

    path = os.path.realpath(path)
    obs = Observation()

    class _Collector(Collector):
        def emit(self, record):
            super().emit(record)
            name = record.name
            if name.endswith("__recompiles") and len(self.recompiles) > len(obs.recompile_calls):
                obs.recompile_calls.append(_stack_lines(path))
            elif name.endswith("__graph_breaks"):
                obs.break_calls.append(_stack_lines(path))

    saved_breakpoint = os.environ.get("PYTHONBREAKPOINT")
    os.environ["PYTHONBREAKPOINT"] = "0"                  # breakpoint() must not stop the run
    collector = _Collector(lambda f: bool(f) and _same(f, path))
    try:
        with _cheap_compile(fullgraph), warnings.catch_warnings(record=True) as caught, collector:
            warnings.simplefilter("always")
            counters.clear()
            try:
                exec_file(path, calls, entry)
            except BaseException as e:      # noqa: BLE001 - an example may raise anything; we report it
                if isinstance(e, KeyboardInterrupt):
                    raise
                obs.error = e
            obs.frames = counters["frames"]["ok"]
    finally:
        if saved_breakpoint is None:
            os.environ.pop("PYTHONBREAKPOINT", None)
        else:
            os.environ["PYTHONBREAKPOINT"] = saved_breakpoint
        torch._dynamo.reset()
    obs.breaks = list(collector.graph_breaks)
    obs.recompiles = list(collector.recompiles)
    obs.recompile_calls = (obs.recompile_calls + [()] * len(obs.recompiles))[:len(obs.recompiles)]
    obs.hit_recompile_limit = collector.hit_recompile_limit
    obs.warnings = [(w.category.__name__, str(w.message), w.filename, w.lineno) for w in caught]
    return obs


def exec_file(path: str, calls: Sequence[str] = (), entry: Optional[str] = None) -> None:
    """Import `path` as a fresh module (under a name no other module has, dropped afterwards), then run its
    `entry()` and `calls` (statements, in its namespace, with `torch` imported there)."""
    import torch

    name = "_dynlint_run_" + re.sub(r"\W", "_", os.path.basename(path)[:-3]) + f"_{os.getpid()}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        namespace = vars(module)
        namespace.setdefault("torch", torch)
        if entry:
            namespace[entry]()
        for call in calls:
            exec(compile(call, f"<calls of {os.path.basename(path)}>", "exec"), namespace)
    finally:
        sys.modules.pop(name, None)
