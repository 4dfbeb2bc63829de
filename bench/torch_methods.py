"""Write dynlint/analysis/torch_methods.py: what real Dynamo does when compiled code calls a method of a torch
optimizer or learning-rate scheduler (`opt.zero_grad()`, `opt.step()`, `sched.step()`), or of one of the
standard library's locks, queues and events (`q.put(t)`, `lock.acquire()`, `done.set()`), of NumPy's random
generators (`rng.integers(0, n)`) or of torch's gradient scaler (`scaler.step(opt)`).

    python bench/torch_methods.py            # measure on the torch installed here and write the table
    python bench/torch_methods.py --check    # exit 1 if the table differs from what this torch does

Each public `torch.optim` optimizer and `torch.optim.lr_scheduler` scheduler is built on a small `nn.Linear`,
and each method below is called from a function compiled with dynlint's in-process harness (backend "eager",
as the rule proofs): the graph break at the call's line, by Dynamo's own gb_type, or none. Measured, never
written by hand: which methods break changes with Dynamo's trace rules (`Optimizer.zero_grad` is wrapped in
`torch._disable_dynamo`, a scheduler's file is force-skipped, an optimizer's `step` runs an explicit
`torch._dynamo.graph_break()` before its update; a queue's `put` takes a `threading.Condition`, a context
manager Dynamo does not model; a lock's `acquire` is a C method it cannot call).
"""
from __future__ import annotations

import argparse
import inspect
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "dynlint" / "analysis" / "torch_methods.py"
sys.path.insert(0, str(ROOT))

# the calls measured, by kind of object: method -> its arguments in the probe
OPTIMIZER_CALLS = {"step": "", "zero_grad": "", "state_dict": "", "load_state_dict": "STATE",
                   "add_param_group": "{'params': [EXTRA]}"}
SCHEDULER_CALLS = {"step": "", "get_last_lr": "", "state_dict": ""}
# scheduler constructor arguments beyond the optimizer (schedulers without a default for them)
SCHEDULER_ARGS = {"CosineAnnealingLR": "T_max=10", "CosineAnnealingWarmRestarts": "T_0=10",
                  "CyclicLR": "base_lr=0.01, max_lr=0.1", "ExponentialLR": "gamma=0.9",
                  "LambdaLR": "lr_lambda=lambda e: 1.0", "MultiStepLR": "milestones=[2]",
                  "MultiplicativeLR": "lr_lambda=lambda e: 0.9", "OneCycleLR": "max_lr=0.1, total_steps=10",
                  "StepLR": "step_size=2"}
OPTIMIZER_ARGS = {"SparseAdam": None, "LBFGS": None}     # need sparse gradients / a closure: not measured
# the standard library's synchronisation objects: constructor -> method -> (its arguments, the set-up that makes
# the call return at once: an item to get, a lock to release); a Condition's wait/notify need its lock held,
# which is a `with` block (DYN607)
QUEUE_CALLS = {"put": ("1", ""), "put_nowait": ("1", ""), "get": ("", "obj.put(0)"),
               "get_nowait": ("", "obj.put(0)"), "qsize": ("", ""), "empty": ("", "")}
FULL_QUEUE_CALLS = dict(QUEUE_CALLS, full=("", ""), task_done=("", "obj.put(0); obj.get()"))
LOCK_CALLS = {"acquire": ("", ""), "release": ("", "obj.acquire()")}
SYNC_OBJECTS = {"queue.Queue": FULL_QUEUE_CALLS, "queue.LifoQueue": FULL_QUEUE_CALLS,
                "queue.PriorityQueue": FULL_QUEUE_CALLS, "queue.SimpleQueue": QUEUE_CALLS,
                "threading.Lock": dict(LOCK_CALLS, locked=("", "")), "threading.RLock": LOCK_CALLS,
                "threading.Semaphore": LOCK_CALLS, "threading.BoundedSemaphore": LOCK_CALLS,
                "threading.Condition": LOCK_CALLS,
                "threading.Event": {"set": ("", ""), "clear": ("", ""), "wait": ("0", ""), "is_set": ("", "")}}
# constructor expressions where the name alone does not build one
BUILT = {"numpy.random.default_rng": "numpy.random.default_rng(0)", "numpy.random.RandomState":
         "numpy.random.RandomState(0)", "torch.amp.GradScaler": "torch.amp.GradScaler('cpu')"}
# NumPy's random generators (every draw a C method) and torch's gradient scaler (its file is skipped); its step and
# update need a scaled backward first
SCALED = "obj.scale(model(torch.randn(2, 4)).sum()).backward()"
RNG_CALLS = {"random": ("", ""), "integers": ("0, 4", ""), "beta": ("0.4, 0.4", ""), "normal": ("size=3", ""),
             "uniform": ("", ""), "choice": ("4", ""), "permutation": ("4", "")}
OTHER_OBJECTS = {"numpy.random.default_rng": RNG_CALLS,
                 "numpy.random.RandomState": {"rand": ("", ""), "randn": ("", ""), "randint": ("4", ""),
                                              "uniform": ("", ""), "beta": ("0.4, 0.4", ""), "normal": ("", ""),
                                              "choice": ("4", ""), "permutation": ("4", "")},
                 "torch.amp.GradScaler": {"scale": ("y.sum()", ""), "unscale_": ("opt", "obj.scale(torch.ones(()))"),
                                          "step": ("opt", SCALED), "update": ("", SCALED + "; obj.step(opt)"),
                                          "get_scale": ("", "")}}

PROBE = """
import queue
import threading

import numpy
import torch
from torch import nn
import torch.optim.lr_scheduler

model = nn.Linear(4, 4)
model(torch.randn(2, 4)).sum().backward()
EXTRA = nn.Parameter(torch.zeros(1))
opt = {optimizer}
obj = {obj}
STATE = obj.state_dict() if hasattr(obj, "state_dict") else None
{setup}

def call(x):
    y = x + 1
    obj.{method}({args})
    return y * 2
"""
CALL_LINE = PROBE.splitlines().index("    obj.{method}({args})") + 1   # (`{setup}` is one line)


def classes(module, base) -> list:
    return sorted(n for n in dir(module) if not n.startswith("_") and inspect.isclass(getattr(module, n)) and
                  issubclass(getattr(module, n), base) and getattr(module, n) is not base)


def measure_one(optimizer: str, obj: str, method: str, args: str, setup: str = ""):
    """The gb_type of the break at the call's line, "" for none, None when the probe does not run."""
    from dynlint.compiler import harness
    src = PROBE.format(optimizer=optimizer, obj=obj, method=method, args=args, setup=setup)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "probe.py")
        Path(path).write_text(src)
        obs = harness.observe(path, ["torch.compile(call, backend='eager')(torch.randn(2, 4))"])
    if obs.error is not None:
        return None
    at = [b.gb_types[0] for b in obs.breaks if b.line == CALL_LINE and b.gb_types]     # (innermost frame of the probe)
    return at[0] if at else ""


def measure() -> dict:
    import torch
    import torch.optim.lr_scheduler as schedulers

    table = {}
    for name in classes(torch.optim, torch.optim.Optimizer):
        if name in OPTIMIZER_ARGS:
            continue
        ctor = f"torch.optim.{name}(model.parameters(), lr=0.01)"
        table[f"torch.optim.{name}"] = {m: measure_one(ctor, "opt", m, a) for m, a in OPTIMIZER_CALLS.items()}
    for name in classes(schedulers, schedulers.LRScheduler):
        if name in ("ChainedScheduler", "SequentialLR", "LRScheduler"):
            continue                    # built from other schedulers / the abstract base
        extra = SCHEDULER_ARGS.get(name, "")
        ctor = f"torch.optim.lr_scheduler.{name}(opt{', ' + extra if extra else ''})"
        table[f"torch.optim.lr_scheduler.{name}"] = {
            m: measure_one("torch.optim.SGD(model.parameters(), lr=0.01)", ctor, m,
                           "1.0" if (name, m) == ("ReduceLROnPlateau", "step") else a)     # (the metric)
            for m, a in SCHEDULER_CALLS.items()}
    sgd = "torch.optim.SGD(model.parameters(), lr=0.01)"
    for ctor, calls in {**SYNC_OBJECTS, **OTHER_OBJECTS}.items():
        table[ctor] = {m: measure_one(sgd, BUILT.get(ctor, ctor + "()"), m, a, setup) for m, (a, setup) in calls.items()}
    table = {cls: {m: gb for m, gb in methods.items() if gb is not None} for cls, methods in table.items()}
    table = {cls: methods for cls, methods in table.items() if methods}     # (Muon takes 2-d parameters only)
    # a base class, for a value known only by its annotation: the methods every measured subclass breaks on alike
    for base, prefix in (("torch.optim.Optimizer", "torch.optim."),
                         ("torch.optim.lr_scheduler.LRScheduler", "torch.optim.lr_scheduler.")):
        subs = [m for c, m in table.items() if c.startswith(prefix) and c.count(".") == prefix.count(".")]
        table[base] = {m: gb for m, gb in subs[0].items() if gb and all(s.get(m) == gb for s in subs)}
    return table


def render(version: str, table: dict) -> str:
    lines = [f'"""What torch {version}\'s Dynamo does when compiled code calls a method of an optimizer, a',
             "learning-rate scheduler, a gradient scaler, a NumPy random generator or a standard-library lock, queue",
             "or event, measured by bench/torch_methods.py",
             "under real Dynamo: do not edit by hand.",
             "Class -> method -> the gb_type of the graph break at the call (\"\" where it is traced).\"\"\"",
             "", f"TORCH_VERSION = {version!r}", "", "METHOD_BREAKS = {"]
    for cls in sorted(table):
        lines.append(f"    {cls!r}: {{")
        lines += [f"        {m!r}: {gb!r}," for m, gb in sorted(table[cls].items())]
        lines.append("    },")
    lines += ["}", ""]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed table instead of writing it")
    args = ap.parse_args()
    import torch
    text = render(torch.__version__.split("+")[0], measure())
    if args.check:
        same = OUT.exists() and OUT.read_text(encoding="utf-8") == text
        print("up to date" if same else f"{OUT.relative_to(ROOT)} differs from what this torch does")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
