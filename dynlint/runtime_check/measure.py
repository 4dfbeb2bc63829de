"""Worker-side helpers: build an example's target, call it, time it. Imports torch (worker only)."""
from __future__ import annotations

import inspect
import random
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

MIN_REPEATS = 3
MAX_REPEATS = 50


@dataclass(frozen=True)
class Call:
    args: Tuple[Any, ...]
    kwargs: Dict[str, Any]


@dataclass(frozen=True)
class Target:
    fn: Callable
    calls: Tuple[Call, ...]


def build_target(factory: Callable, device: str) -> Target:
    """Call the factory (seeded, so that two builds are identical) and normalise what it returns."""
    seed_everything(0)
    if "device" in inspect.signature(factory).parameters:
        made, move = factory(device=device), False
    else:
        made, move = factory(), device != "cpu"
    if isinstance(made, dict):
        fn, inputs = made.get("fn", made.get("callable")), made.get("inputs", made.get("args"))
    elif isinstance(made, (tuple, list)) and len(made) == 2:
        fn, inputs = made
    else:
        raise TypeError("an example factory must return (callable, [args_tuple, ...]) or "
                        f"{{'fn': callable, 'inputs': [...]}}, not {type(made).__name__}")
    from dynlint.compiler.compat import unwrap_compiled
    fn = unwrap_compiled(fn)
    if not callable(fn):
        raise TypeError(f"the example's callable is a {type(fn).__name__}, which cannot be called")
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError("an example must give a non-empty list of argument tuples")
    calls = tuple(Call(tuple(i), {}) if isinstance(i, (tuple, list)) else
                  Call((), dict(i)) if isinstance(i, dict) else Call((i,), {}) for i in inputs)
    if move:
        fn = fn.to(device) if isinstance(fn, torch.nn.Module) else fn
        calls = tuple(Call(to_device(c.args, device), to_device(c.kwargs, device)) for c in calls)
    return Target(fn, calls)


def to_device(value, device: str):
    if isinstance(value, (torch.Tensor, torch.nn.Module)):
        return value.to(device)
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(to_device(v, device) for v in value)
    if isinstance(value, dict):
        return {k: to_device(v, device) for k, v in value.items()}
    return value


def seed_everything(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed)


def invoke(fn: Callable, call: Call, seed: int):
    """One call, seeded the same way in eager and compiled runs so random ops draw the same numbers."""
    seed_everything(seed)
    return fn(*call.args, **call.kwargs)


def code_of(fn: Callable):
    """The code object Dynamo compiles for fn (Module.forward for modules), or None."""
    fn = inspect.unwrap(fn) if not isinstance(fn, torch.nn.Module) else fn
    if isinstance(fn, torch.nn.Module):
        return getattr(type(fn).forward, "__code__", None)
    while hasattr(fn, "func"):                    # functools.partial
        fn = fn.func
    return getattr(fn, "__code__", None) or getattr(getattr(type(fn), "__call__", None), "__code__", None)


def qualname_of(fn: Callable) -> str:
    if isinstance(fn, torch.nn.Module):
        return f"{type(fn).__qualname__}.forward"
    while hasattr(fn, "func"):
        fn = fn.func
    return getattr(fn, "__qualname__", type(fn).__qualname__)


class Timer:
    """Wall-clock on CPU; CUDA events around each call on GPU (the GPU runs asynchronously)."""

    def __init__(self, cuda: bool):
        self.cuda = cuda

    def sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()

    def once_s(self, run: Callable[[], object]) -> float:
        """Seconds for one call, host side, including compilation when it happens."""
        self.sync()
        start = time.perf_counter()
        run()
        self.sync()
        return time.perf_counter() - start

    def steady_ms(self, eager: Callable[[], object], compiled: Callable[[], object],
                  budget_s: float) -> Tuple[float, float]:
        """Median steady-state milliseconds of (eager, compiled), after one warm-up call each.

        The two alternate call by call, so that load from other processes (a shared CPU, another worker)
        hits both alike and the speedup stays meaningful. Stops once `budget_s` is spent: at least 3 pairs,
        unless single calls are so slow that twice the budget passes first.
        """
        eager()
        compiled()
        self.sync()
        # On CPU, alternate call by call so that load from other processes hits both alike. On a GPU, which
        # nothing else shares, alternate in blocks: back-to-back calls of one kind are what a standalone
        # measurement sees (a different kernel between them changes cache and clock state).
        block = 10 if self.cuda else 1
        times: Tuple[List[float], List[float]] = ([], [])
        start = time.perf_counter()
        while len(times[0]) < MAX_REPEATS:
            times[0].extend(self._one_ms(eager) for _ in range(block))
            times[1].extend(self._one_ms(compiled) for _ in range(block))
            spent = time.perf_counter() - start
            if spent > budget_s and (len(times[0]) >= MIN_REPEATS or spent > 2 * budget_s):
                break
        return statistics.median(times[0]), statistics.median(times[1])

    def _one_ms(self, run: Callable[[], object]) -> float:
        if self.cuda:
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
            run()
            end.record()
            end.synchronize()
            return begin.elapsed_time(end)
        start = time.perf_counter()
        run()
        return (time.perf_counter() - start) * 1000.0

    def peak_bytes(self, run: Callable[[], object]) -> Optional[int]:
        """CUDA: peak memory allocated during one call above what was allocated before it."""
        if not self.cuda:
            return None
        self.sync()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        run()
        self.sync()
        return int(torch.cuda.max_memory_allocated() - base)
