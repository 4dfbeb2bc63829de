"""Write dynlint/analysis/non_tensor_returns.py: the torch functions that return a Python value (not a tensor)
and that Dynamo breaks the graph on, measured under real Dynamo on the installed torch.

    python bench/non_tensor_returns.py            # print what this torch does
    python bench/non_tensor_returns.py --write    # and write the table
    python bench/non_tensor_returns.py --check    # exit 1 if the table differs from what this torch does

Dynamo models a torch function it puts in the graph by running it on fake tensors; one that answers with a
Python value it has no constant rule for (`torch.cuda.device_count()`, `torch.get_num_threads()`,
`torch.cuda.max_memory_allocated()`, `torch.backends.mps.is_available()`) ends the graph ("torch.* op returned
non-Tensor"); others it folds to a constant (`torch.cuda.is_available()`) or skips. This script takes every
public function of torch's namespaces that can be called with no argument and answers with a Python value,
under every public name a user reaches it by (`torch.cuda.max_memory_allocated` as well as
`torch.cuda.memory.max_memory_allocated`), calls it from a compiled function with `fullgraph=True`, and keeps
those Dynamo breaks on with that reason. No rule lists them by hand (DYN617 reads the table).

Functions that change state (setters, seeding, initialisation, synchronisation, cache control) are not called.
The CPU build answers for the CUDA, XPU and MPS queries as a machine without those devices would: Dynamo's rule
for a function does not depend on the device.
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import pkgutil
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "dynlint" / "analysis" / "non_tensor_returns.py"
NAMESPACES = ("torch", "torch.cuda", "torch.cuda.memory", "torch.backends", "torch.cpu", "torch.xpu", "torch.mps",
              "torch.accelerator", "torch.distributed")
# names that change state when called (the word itself, or it and an underscore first): never called here
CHANGES_STATE = ("set", "manual_seed", "seed", "init", "synchronize", "empty_cache", "reset", "destroy", "barrier",
                 "use", "compile", "save", "load", "enable", "disable", "ipc_collect", "record", "fork", "freeze",
                 "memory_snapshot", "profile", "flags", "preferred", "allow", "clear", "cudart", "nvtx", "sym")


def _changes_state(attr: str) -> bool:
    return any(attr == word or attr.startswith(word + "_") for word in CHANGES_STATE)
PLAIN = (bool, int, float, str, list, tuple, dict)


def _modules():
    """The public torch modules of NAMESPACES and the packages below torch.backends."""
    import torch.backends
    names = list(NAMESPACES) + [f"torch.backends.{m.name}" for m in pkgutil.iter_modules(torch.backends.__path__)
                                if not m.name.startswith("_")]
    for name in names:
        try:
            yield name, importlib.import_module(name)
        except Exception:
            continue


def candidates() -> dict:
    """object id -> (the function, every public name it is reached by) for the zero-argument public functions of
    torch's namespaces that answer with a plain Python value."""
    found: dict = {}
    for modname, module in _modules():
        inner = getattr(module, "m", None)     # (torch.backends.cudnn: a module object wrapping the module `m`)
        for attr in set(dir(module)) | set(dir(inner) if inspect.ismodule(inner) else ()):
            fn = getattr(module, attr, None)
            if attr.startswith("_") or _changes_state(attr) or \
                    not callable(fn) or inspect.isclass(fn) or inspect.ismodule(fn):   # (a cached function too)
                continue
            found.setdefault(id(fn), (fn, set()))[1].add(f"{modname}.{attr}")
    out = {}
    for key, (fn, names) in found.items():
        try:
            params = inspect.signature(fn).parameters.values()
            if any(p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
                continue
        except (TypeError, ValueError):
            pass                # a builtin with no signature (`torch.get_num_threads`): called, and it may refuse
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = fn()
        except Exception:
            continue
        if isinstance(value, PLAIN) and not isinstance(value, tuple(getattr(fn, "__mro__", ()))):
            out[key] = (fn, names)
    return out


def measure() -> list:
    """The public names of the functions Dynamo breaks on with "torch.* op returned non-Tensor"."""
    import torch
    breaks = set()
    for fn, names in candidates().values():
        torch._dynamo.reset()

        def probe(x, fn=fn):
            return x + 1, fn()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.compile(probe, backend="eager", fullgraph=True)(torch.ones(2))
        except Exception as e:          # (fullgraph: the break is raised, its reason in the message)
            if "returned non-Tensor" in str(e):
                breaks |= names
    return sorted(breaks)


def generate(names: list, release: str) -> str:
    lines = [f"    {n!r}," for n in names]
    return (f'"""The public torch functions that return a Python value and that Dynamo breaks the graph on ("torch.* op\n'
            f'returned non-Tensor"), measured on torch {release} by bench/non_tensor_returns.py: do not edit by hand."""\n\n'
            f"MEASURED = [{release!r}]\n\n"
            "NON_TENSOR_RETURNS = frozenset({\n" + "\n".join(lines) + "\n})\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    import torch
    release = ".".join(torch.__version__.split("+")[0].split(".")[:2])
    names = measure()
    if args.check:
        from dynlint.analysis import non_tensor_returns
        same = set(names) == non_tensor_returns.NON_TENSOR_RETURNS
        print("the table is this torch's" if same else f"differs: {sorted(set(names) ^ non_tensor_returns.NON_TENSOR_RETURNS)}")
        return 0 if same else 1
    if args.write:
        OUT.write_text(generate(names, release))
    print("\n".join(names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
