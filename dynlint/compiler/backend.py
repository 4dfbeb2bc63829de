"""dynlint's Dynamo backend: record each FX graph, run the chosen graph passes, lower through Inductor.

    backend = DynlintBackend(is_user, passes=make_passes(["remove-noop-copies"]))
    torch.compile(fn, backend=backend)(*args)
    backend.graphs      # [GraphRecord, ...] one per graph Dynamo handed over (resume functions, recompiles)

Inductor generates C++ on CPU and Triton on CUDA; `lower="eager"` skips code generation (fast, for tests).
"""
from __future__ import annotations

import re
import time
from typing import Callable, List, Sequence, Set, Tuple

import torch
import torch.fx

from dynlint.compiler import compat
from dynlint.compiler.kernels import count_kernels
from dynlint.compiler.passes import GraphPass
from dynlint.compiler.records import GraphRecord

_OPS = ("call_function", "call_method", "call_module")
_FRAME = re.compile(r'File "(.+?)", line (\d+)')


class DynlintBackend:
    def __init__(self, is_user: Callable[[str], bool], passes: Sequence[GraphPass] = (), lower: str = "inductor",
                 mode: str = "default"):
        """mode: a `torch.compile` mode (default, reduce-overhead, max-autotune, max-autotune-no-cudagraphs):
        Inductor's options for it apply to every graph, as `torch.compile(mode=...)` applies them."""
        if lower not in ("inductor", "eager"):
            raise ValueError(f"lower must be 'inductor' or 'eager', not {lower!r}")
        self.is_user = is_user
        self.passes = tuple(passes)
        self.lower = lower
        self.mode = mode
        self.graphs: List[GraphRecord] = []

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list):
        start = time.perf_counter()
        dynamic = _is_dynamic(example_inputs)
        lines = self._user_lines(gm)                    # before the passes, which may drop nodes
        applied = tuple((p.name, p(gm)) for p in self.passes)
        sources: List[str] = []
        if self.lower == "inductor":
            from torch._inductor.compile_fx import compile_fx

            from torch._inductor import list_mode_options

            patches = list_mode_options(self.mode) if self.mode != "default" else None
            with compat.output_code_hook(sources.append):
                compiled = compile_fx(gm, example_inputs, config_patches=patches)
        else:
            compiled = gm.forward
        counts = [count_kernels(s) for s in sources]
        self.graphs.append(GraphRecord(
            index=len(self.graphs),
            ops=sum(1 for n in gm.graph.nodes if n.op in _OPS),
            dynamic=dynamic,
            lines=lines,
            kernels=sum(k for k, _ in counts) if self.lower == "inductor" else -1,
            extern_kernels=sum(e for _, e in counts),
            passes=applied,
            compile_s=time.perf_counter() - start,
        ))
        return compiled

    def _user_lines(self, gm: torch.fx.GraphModule) -> Tuple[Tuple[str, int], ...]:
        """The innermost user frame of every node's stack trace: which user lines this graph holds."""
        found: Set[Tuple[str, int]] = set()
        for node in gm.graph.nodes:
            frames = [(f, int(n)) for f, n in _FRAME.findall(node.meta.get("stack_trace") or "")]
            user = [fr for fr in frames if self.is_user(fr[0])]
            if user and node.op in _OPS:
                found.add(user[-1])
        return tuple(sorted(found))


def _is_dynamic(example_inputs: list) -> bool:
    """A SymInt among the inputs or in an input's shape means Dynamo compiled a dynamic-shape graph."""
    sym = (torch.SymInt, torch.SymFloat)
    return any(isinstance(e, sym) or (isinstance(e, torch.Tensor) and any(isinstance(d, torch.SymInt) for d in e.shape))
               for e in example_inputs)
