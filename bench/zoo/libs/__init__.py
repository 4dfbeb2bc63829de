"""One adapter per model library for bench/zoo/collect.py: how to enumerate its models, build each small with random
weights, and make the inputs of two calls. An adapter is a module here with

    PACKAGE = "timm"                 # the import name; record paths are relative to its directory
    def versions() -> dict           # {"timm": "1.0.22", ...}: the results file's header (torch is added)
    def jobs(sample: bool) -> list   # [(model, cls, modes)]: `sample` = a few per family, for a quick sweep
    def build(model, cls, mode) -> Case    # or raise Skip(reason)

and nothing else; the collector does the rest (eager line tracing, compiling, Dynamo's logs) the same for all.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional

LIBRARIES = ("transformers", "diffusers", "timm", "torchvision", "torchaudio")
MODES = ("eval", "train")
MAX_PARAMS = 20_000_000              # a config we failed to shrink: skip, never fill the memory


class Skip(Exception):
    """This model can't be built small or fed generically here: recorded as `skipped` with the reason."""


@dataclasses.dataclass
class Case:
    """One built model (or function) and the two calls the collector runs, eagerly and compiled."""
    fn: Callable                     # what torch.compile wraps: an nn.Module, or a bound method (a scheduler's step)
    calls: list                      # two (args, kwargs): the second changes a shape
    module: Any = None               # the nn.Module to put in train mode and zero the grads of (None: a function)
    params: int = 0
    reset: Optional[Callable] = None         # called before the compiled calls (a stateful scheduler)
    fallback: Optional[Callable] = None      # after an eager failure: (calls, {input: why dropped}) or None
    extra: dict = dataclasses.field(default_factory=dict)     # more record fields


def count_params(make) -> int:
    """Parameters of make() built on the meta device: no memory, so a failed shrink is caught before it costs."""
    import torch

    with torch.device("meta"):
        return sum(p.numel() for p in make().parameters())


def short_error(exc) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return text.splitlines()[0][:300]
