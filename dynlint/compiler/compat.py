"""Small shims over torch internals that moved between releases (torch >= 2.6 is supported).

Everything touching a private torch API that is not specific to one module lives here, so a PyTorch
upgrade changes one file.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Callable, Iterator, Optional

import torch
import torch._dynamo


def reset_graph_break_dup_checker() -> None:
    """Forget earlier breaks, so that a repeated break is logged with its traceback (missing before 2.7)."""
    reset = getattr(torch._dynamo.utils, "reset_graph_break_dup_checker", None)
    if reset is not None:
        reset()


def enable_logs() -> Optional[str]:
    """Turn on the graph_breaks and recompiles artifact logs; returns a TORCH_LOGS value to restore later.

    set_logs() is ignored (with a warning) while TORCH_LOGS is set, so the variable is hidden meanwhile.
    """
    saved = os.environ.pop("TORCH_LOGS", None)
    torch._logging.set_logs(graph_breaks=True, recompiles=True)
    return saved


def restore_logs(saved: Optional[str]) -> None:
    torch._logging.set_logs()
    if saved is not None:
        os.environ["TORCH_LOGS"] = saved


def match_eager_random_numbers() -> None:
    """Make Inductor's random ops draw the numbers eager draws (for the same seed), so that a dropout is
    not reported as a compiled-vs-eager mismatch. Costs a little speed on random-heavy graphs."""
    import torch._inductor.config

    torch._inductor.config.fallback_random = True


def torch_version() -> str:
    return torch.__version__


def triton_version() -> Optional[str]:
    """Triton's version when it is installed and usable (CUDA builds), else None; never imported on CPU."""
    if not torch.cuda.is_available():
        return None
    try:
        import triton
    except Exception:        # a broken Triton install must not fail the verify run
        return None
    return getattr(triton, "__version__", None)


@contextmanager
def output_code_hook(callback: Callable[[str], None]) -> Iterator[None]:
    """Call `callback(source)` with each wrapper module Inductor generates or loads from its cache.

    GraphLowering.save_output_code is the hook torch's own tests use (run_and_get_code); it fires on fresh
    compiles and on FX-graph-cache hits alike. It is read and called on the class, so a plain function fits.
    """
    from torch._inductor.graph import GraphLowering

    previous = getattr(GraphLowering, "save_output_code", None)

    def both(source: str) -> None:
        callback(source)
        if previous is not None:
            previous(source)

    GraphLowering.save_output_code = both
    try:
        yield
    finally:
        GraphLowering.save_output_code = previous


def unwrap_compiled(fn):
    """The user's own callable behind a torch.compile wrapper (an already-decorated function or an
    OptimizedModule), so that eager runs are eager and dynlint's backend is the only one compiling."""
    orig = getattr(fn, "_orig_mod", None)
    if isinstance(orig, torch.nn.Module):
        return orig
    return getattr(fn, "_torchdynamo_orig_callable", fn)
