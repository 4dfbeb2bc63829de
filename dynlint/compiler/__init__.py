"""The only dynlint package that touches torch._dynamo / torch._inductor.

A PyTorch upgrade should change this package alone. Importing it does not import torch: names load on
first use (PEP 562), so `dynlint.runtime_check` can reach them lazily inside its worker process.

    DynlintBackend   the Dynamo backend: records graphs, runs graph passes, lowers through Inductor
    Collector        captures graph breaks, recompiles and warnings from Dynamo's logs
    make_passes      graph passes by name (PASSES lists them); all off by default
    GraphBreak, Recompile, GuardFailure, GraphRecord   the flat records they produce (torch-free)
"""
from __future__ import annotations

from dynlint import lazy

__getattr__, __all__ = lazy.attributes(__name__, {
    "DynlintBackend": "dynlint.compiler.backend",
    "Collector": "dynlint.compiler.capture",
    "GraphPass": "dynlint.compiler.passes",
    "RemoveNoOpCopies": "dynlint.compiler.passes",
    "PASSES": "dynlint.compiler.passes",
    "make_passes": "dynlint.compiler.passes",
    "GraphBreak": "dynlint.compiler.records",
    "GuardFailure": "dynlint.compiler.records",
    "Recompile": "dynlint.compiler.records",
    "GraphRecord": "dynlint.compiler.records",
    "load_gb_ids": "dynlint.compiler.registry",
    "count_kernels": "dynlint.compiler.kernels",
})
