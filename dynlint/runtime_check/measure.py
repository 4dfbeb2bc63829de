"""Worker-side helpers: build an example's target, call it, time it. Imports torch (worker only)."""
from __future__ import annotations

import inspect
import random
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Tuple

import torch


@dataclass(frozen=True)
class Call:
    args: Tuple[Any, ...]
    kwargs: Dict[str, Any]


@dataclass(frozen=True)
class Target:
    fn: Callable
    calls: Tuple[Call, ...]
    loss: Optional[Callable] = None          # training examples: output -> the loss (see examples.example)
    optimizer: Optional[Callable] = None     # training examples: parameters -> the optimizer


def build_target(factory: Callable, device: str) -> Target:
    """Call the factory (seeded, so that two builds are identical) and normalise what it returns."""
    seed_everything(0)
    if "device" in inspect.signature(factory).parameters:
        made, move = factory(device=device), False
    else:
        made, move = factory(), device != "cpu"
    extras: Dict[str, Any] = {}
    if isinstance(made, dict):
        fn, inputs = made.get("fn", made.get("callable")), made.get("inputs", made.get("args"))
        extras = {k: made[k] for k in ("loss", "optimizer") if made.get(k) is not None}
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
    return Target(fn, calls, **extras)


def float64_outputs(factory: Callable, device: str, snapshot: Callable) -> list:
    """The example's calls run again in float64, as PyTorch's benchmark harness makes its reference: a fresh
    build (seeded as the other two, so it starts from the state the eager outputs started from), its module
    (the callable, or the module a bound method belongs to) converted with `.double()` and the floating-point
    input tensors to float64; each output snapshotted. Code the example compiles itself runs eagerly (a float64
    call would recompile it, seen as the example's recompile). Raises when the float64 run fails (a function
    holding tensors of its own in another dtype, say): then there is no reference."""
    target = build_target(factory, device)
    owner = target.fn if isinstance(target.fn, torch.nn.Module) else getattr(target.fn, "__self__", None)
    if isinstance(owner, torch.nn.Module):
        owner.double()
    calls = [Call(to_float64(c.args), to_float64(c.kwargs)) for c in target.calls]
    with torch.compiler.set_stance("force_eager"):
        return [snapshot(invoke(target.fn, call, i)) for i, call in enumerate(calls)]


def to_float64(value):
    if isinstance(value, torch.Tensor):
        return value.double() if value.is_floating_point() else value
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(to_float64(v) for v in value)
    if isinstance(value, dict):
        return {k: to_float64(v) for k, v in value.items()}
    return value


def training_step(module: Callable, target: Target, compiled: Optional[Callable] = None) -> Callable[..., object]:
    """A call that is one training step of `module` (run through `compiled` when given): forward, the
    loss, backward, the optimizer's step; it returns the forward's output."""
    if not isinstance(module, torch.nn.Module):
        raise TypeError("a training example's callable must be an nn.Module (its parameters are trained)")
    optimizer = (target.optimizer or (lambda ps: torch.optim.SGD(ps, lr=1e-3)))(module.parameters())
    loss_of = target.loss or default_loss
    run = compiled if compiled is not None else module   # bool() of a compiled module asks its len()

    def step(*args, **kwargs):
        out = run(*args, **kwargs)
        loss_of(out).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return out
    return step


def default_loss(output) -> torch.Tensor:
    """The sum of the means of the floating-point tensors in an output (a tensor, a tuple, a dict, a
    ModelOutput), each a part of the graph."""
    parts = []

    def walk(v) -> None:
        if isinstance(v, torch.Tensor):
            if v.is_floating_point() and v.requires_grad:
                parts.append(v.float().mean())
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
    walk(output)
    if not parts:
        raise TypeError("a training example's output holds no floating-point tensor that requires grad: "
                        "give the factory's dict a 'loss'")
    return torch.stack(parts).sum()


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


class GradProbe(torch.overrides.TorchFunctionMode):
    """Whether the torch calls made inside it that returned a tensor ran with autograd on: `off` is True when
    there were some and none did (the example's own `torch.no_grad()` or `torch.inference_mode()`; the calls
    that switch the mode return none)."""

    def __init__(self):
        super().__init__()
        self.on = self.calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if isinstance(out, torch.Tensor):
            self.calls += 1
            self.on += torch.is_grad_enabled()
        return out

    @property
    def off(self) -> bool:
        return self.calls > 0 and self.on == 0


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

    def block_s(self, run: Callable[[], object], calls: int) -> float:
        """Seconds for `calls` calls in a row, the device synchronised before and after (what PyTorch's
        benchmark harness times: host and device together)."""
        self.sync()
        start = time.perf_counter()
        for _ in range(calls):
            run()
        self.sync()
        return time.perf_counter() - start

    def device_ms(self, run: Callable[[], object], calls: int = 10) -> Optional[float]:
        """CUDA: milliseconds the device spends in kernels per call (the profiler's sum of kernel times), to set
        beside the wall time: a call far longer than its kernels is launch-bound. None on CPU, or when the
        profiler cannot say."""
        if not self.cuda:
            return None
        from torch.profiler import ProfilerActivity, profile

        self.sync()
        try:
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(calls):
                    run()
                self.sync()
            total_us = sum(getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0)
                           for e in prof.key_averages())
        except Exception:           # noqa: BLE001 - a profiler that cannot run (CUPTI missing) says nothing
            return None
        return total_us / 1000.0 / calls

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
