"""Count the kernels in Inductor's generated wrapper code (reference §5.5).

`torch._inductor.metrics.generated_kernel_count` counts variants (vectorised and tail loops of one C++ kernel
are several) and is restored on cache hits, so we count from the source instead: one
`name = async_compile.cpp_pybinding(...)` / `.cpp(...)` / `.triton(...)` per fused kernel, and one
`extern_kernels.mm(...)` per library call. Pure text; no torch import.
"""
from __future__ import annotations

import re
from typing import Tuple

_FUSED = re.compile(r"^(\w+) = async_compile\.(?:cpp|triton)", re.M)
_EXTERN = re.compile(r"extern_kernels\.(\w+)\(")


def count_kernels(source: str) -> Tuple[int, int]:
    """(fused kernels defined, library calls made) in one generated wrapper module."""
    return len(set(_FUSED.findall(source))), len(_EXTERN.findall(source))
