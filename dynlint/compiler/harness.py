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
import functools
import importlib.util
import io
import math
import os
import random
import re
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

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


    def guard_lines(self, path: str) -> List[Optional[set]]:
        """Per recompile, the lines of `path` that Dynamo's log names for it: the source line of each failed
        guard (the log lists one per cache entry); for a guard with no source line (a tensor's metadata, grad
        mode), the first line of the recompiled function. None when the log names no line of `path` (a guard
        that a torch layer installs, a torch module compiled)."""
        out: List[Optional[set]] = []
        for rc in self.recompiles:
            lines = set()
            for f in rc.failures:
                m = _GUARD_SOURCE.search(f.guard)
                where = (f.path, f.line) if f.line and f.path else ((m.group(1), int(m.group(2))) if m else None)
                if where is None and rc.path and _same_suffix(rc.path, path):
                    lines.add(rc.line)
                elif where is not None and _same_suffix(where[0], path):
                    lines.add(where[1])
            out.append(lines or None)
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


# ---- running a program eagerly and compiled, recording its outputs (the fix measurements) ----------------
RTOL, ATOL = 1e-5, 1e-6
@dataclass
class Run:
    outputs: List[list] = field(default_factory=list)     # per call of a compiled callable: its flattened result
    breaks: list = field(default_factory=list)            # dynlint.compiler.GraphBreak
    graphs: int = 0                                       # FX graphs Dynamo produced
    recompiles: int = 0                                   # recompiles Dynamo logged
    error: Optional[str] = None
    warnings: List[Tuple[str, str, int]] = field(default_factory=list)    # (category, file, line)

    def break_lines(self, path: str) -> Dict[int, List[Tuple[str, ...]]]:
        out: Dict[int, List[Tuple[str, ...]]] = {}
        for b in self.breaks:
            if b.path and os.path.realpath(b.path) == os.path.realpath(path):
                out.setdefault(b.line, []).append(tuple(b.gb_types))
        return out


def _leaves(value, out: list) -> list:
    import torch

    if isinstance(value, torch.Tensor):
        out.append(value.detach().cpu().clone())
    elif isinstance(value, (list, tuple)):
        out.append(type(value).__name__)
        for v in value:
            _leaves(v, out)
    elif isinstance(value, dict):
        out.append("dict")
        for k in value:
            out.append(repr(k))
            _leaves(value[k], out)
    elif value is None or isinstance(value, (bool, int, float, str)):
        out.append(value)
    else:
        out.append(f"<{type(value).__name__}>")
    return out


@contextlib.contextmanager
def _recording(run: Run, compiled: bool):
    """Replace torch.compile: compiled -> Dynamo with a graph-counting eager backend; else the identity. Either
    way every call of what it returns is recorded in run.outputs."""
    import torch

    original = torch.compile

    def count_graphs(gm, example_inputs):
        run.graphs += 1
        return gm.forward

    def record(value):
        run.outputs.append(_leaves(value, []))
        return value

    class EagerModule(torch.nn.Module):
        """What torch.compile(module) returns, without compiling: calls and attributes go to the module."""

        def __init__(self, mod):
            super().__init__()
            self._orig_mod = mod

        def forward(self, *args, **kwargs):
            return self._orig_mod(*args, **kwargs)

        def __getattr__(self, name):
            if name == "_orig_mod":
                return self._modules["_orig_mod"]
            return getattr(self._orig_mod, name)

    def compile(model=None, **kwargs):
        if model is None:
            return lambda m: compile(m, **kwargs)
        if compiled:
            kwargs = {k: v for k, v in kwargs.items() if k in ("fullgraph", "dynamic")}
            target = original(model, backend=count_graphs, **kwargs)
        else:
            target = EagerModule(model) if isinstance(model, torch.nn.Module) else model
        if isinstance(target, torch.nn.Module):
            target.register_forward_hook(lambda mod, args, out: record(out))
            target.__dict__["__dynlint_recorded__"] = True
            return target

        @functools.wraps(model)
        def call(*args, **kw):
            return record(target(*args, **kw))
        call.__dynlint_recorded__ = True
        return call

    random.seed(0)
    if importlib.util.find_spec("numpy"):      # programs that draw NumPy random numbers repeat too
        import numpy as np
        np.random.seed(0)
    torch.manual_seed(0)
    torch.compile = compile
    try:
        yield
    finally:
        torch.compile = original


def run_program(body: Callable[[], None], is_user: Callable[[str], bool], compiled: bool) -> Run:
    """Run `body` with torch.compile compiled (Dynamo, eager backend) or not, collecting breaks and outputs."""
    import torch
    import torch._dynamo

    from dynlint.compiler import Collector

    run = Run()
    saved = os.environ.get("PYTHONBREAKPOINT")
    os.environ["PYTHONBREAKPOINT"] = "0"
    collector = Collector(is_user)
    try:
        with _recording(run, compiled), collector, contextlib.redirect_stdout(io.StringIO()), \
                _recorded_warnings(run):
            try:
                body()
            except Exception as e:      # noqa: BLE001 - the code under test may raise anything; we report it
                run.error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    finally:
        torch._dynamo.reset()
        if saved is None:
            os.environ.pop("PYTHONBREAKPOINT", None)
        else:
            os.environ["PYTHONBREAKPOINT"] = saved
    run.breaks = list(collector.graph_breaks)
    run.recompiles = len(collector.recompiles)
    return run


@contextlib.contextmanager
def _recorded_warnings(run: Run):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            run.warnings = [(w.category.__name__, w.filename, w.lineno) for w in caught]


def run_file(path: Path, calls: Sequence[str] = (), entry: Optional[str] = None, compiled: bool = True) -> Run:
    """Import `path` as a fresh module, then run `calls` (statements, in its namespace) or its `entry()`."""
    path = Path(path).resolve()
    return run_program(lambda: exec_file(str(path), calls, entry),
                       lambda f: bool(f) and os.path.realpath(f) == str(path), compiled)


def compare(reference: Run, other: Run, exact_types: bool = True) -> List[str]:
    """Differences between two runs' outputs (empty when equal within tolerance, dtypes and types exact).
    exact_types=False: a Python number and a 0-d tensor of the same value count as equal (what an unsafe fix
    may change)."""
    import torch

    out = []
    if reference.error != other.error:
        out.append(f"error {reference.error!r} -> {other.error!r}")
    if len(reference.outputs) != len(other.outputs):
        out.append(f"{len(reference.outputs)} calls recorded -> {len(other.outputs)}")
    for i, (a, b) in enumerate(zip(reference.outputs, other.outputs)):
        if len(a) != len(b):
            out.append(f"call {i}: {len(a)} values -> {len(b)}")
            continue
        for j, (x, y) in enumerate(zip(a, b)):
            where = f"call {i} value {j}"
            if not exact_types:
                x, y = (v.item() if isinstance(v, torch.Tensor) and v.dim() == 0 else v for v in (x, y))
                if isinstance(x, (bool, int, float)) and isinstance(y, (bool, int, float)):
                    x, y = float(x), float(y)
            if isinstance(x, torch.Tensor) != isinstance(y, torch.Tensor) or type(x) is not type(y):
                out.append(f"{where}: {type(x).__name__} -> {type(y).__name__}")
            elif isinstance(x, torch.Tensor):
                if x.dtype != y.dtype or x.shape != y.shape:
                    out.append(f"{where}: {x.dtype}{tuple(x.shape)} -> {y.dtype}{tuple(y.shape)}")
                elif not torch.allclose(x.double(), y.double(), rtol=RTOL, atol=ATOL, equal_nan=True):
                    out.append(f"{where}: values differ (max abs {float((x.double() - y.double()).abs().max()):.3g})")
            elif isinstance(x, float):
                if not (math.isclose(x, y, rel_tol=RTOL, abs_tol=ATOL) or (math.isnan(x) and math.isnan(y))):
                    out.append(f"{where}: {x!r} -> {y!r}")
            elif x != y:
                out.append(f"{where}: {x!r} -> {y!r}")
    return out


# ---- causes of breaks ------------------------------------------------------------------------------------
