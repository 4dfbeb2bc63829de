"""Write dynlint/analysis/torch_methods.py: what real Dynamo does when compiled code calls a method of a torch
optimizer or learning-rate scheduler (`opt.zero_grad()`, `opt.step()`, `sched.step()`).

    python bench/torch_methods.py            # measure on the torch installed here and write the table
    python bench/torch_methods.py --check    # exit 1 if the table differs from what this torch does

Each public `torch.optim` optimizer and `torch.optim.lr_scheduler` scheduler is built on a small `nn.Linear`,
and each method below is called from a function compiled with dynlint's in-process harness (backend "eager",
as the rule proofs): the graph break at the call's line, by Dynamo's own gb_type, or none. Measured, never
written by hand: which methods break changes with Dynamo's trace rules (`Optimizer.zero_grad` is wrapped in
`torch._disable_dynamo`, a scheduler's file is force-skipped, an optimizer's `step` runs an explicit
`torch._dynamo.graph_break()` before its update).
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

PROBE = """
import torch
from torch import nn
import torch.optim.lr_scheduler

model = nn.Linear(4, 4)
model(torch.randn(2, 4)).sum().backward()
EXTRA = nn.Parameter(torch.zeros(1))
opt = {optimizer}
obj = {obj}
STATE = obj.state_dict()

def call(x):
    y = x + 1
    obj.{method}({args})
    return y * 2
"""
CALL_LINE = PROBE.splitlines().index("    obj.{method}({args})") + 1


def classes(module, base) -> list:
    return sorted(n for n in dir(module) if not n.startswith("_") and inspect.isclass(getattr(module, n)) and
                  issubclass(getattr(module, n), base) and getattr(module, n) is not base)


def measure_one(optimizer: str, obj: str, method: str, args: str):
    """The gb_type of the break at the call's line, "" for none, None when the probe does not run."""
    from dynlint.compiler import harness
    src = PROBE.format(optimizer=optimizer, obj=obj, method=method, args=args)
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
    table = {cls: {m: gb for m, gb in methods.items() if gb is not None} for cls, methods in table.items()}
    table = {cls: methods for cls, methods in table.items() if methods}     # (Muon takes 2-d parameters only)
    # a base class, for a value known only by its annotation: the methods every measured subclass breaks on alike
    for base, prefix in (("torch.optim.Optimizer", "torch.optim."),
                         ("torch.optim.lr_scheduler.LRScheduler", "torch.optim.lr_scheduler.")):
        subs = [m for c, m in table.items() if c.startswith(prefix) and c.count(".") == prefix.count(".")]
        table[base] = {m: gb for m, gb in subs[0].items() if gb and all(s.get(m) == gb for s in subs)}
    return table


def render(version: str, table: dict) -> str:
    lines = [f'"""What torch {version}\'s Dynamo does when compiled code calls a method of an optimizer or a',
             "learning-rate scheduler, measured by bench/torch_methods.py under real Dynamo: do not edit by hand.",
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
