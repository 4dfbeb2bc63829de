"""The tensor analysis, in layers that import one way:

* `kinds`       — the vocabulary: TENSOR, VALUE, WEAK, UNKNOWN (and the floating-point levels), how kinds combine;
* `torch_api`   — what torch's functions and methods return: hand-written tables, pure data;
* `syntax`      — what an expression looks like before any name in it is judged (literals, devices);
* `assignments` — what a name or attribute is bound to in a function, a class, a file;
* `inference`   — `Tensors`, the queries rules ask: is this expression a tensor, a mask, a 0-d tensor, floating?
                  (the last answered by `floating`).

Import from the layer you use; the names below stay here for code that imports them from the package.
"""
from dynlint.analysis.tensors.inference import Tensors
from dynlint.analysis.tensors.kinds import FLOAT_IF_TENSOR, FLOAT_TENSOR, TENSOR, UNKNOWN, VALUE, WEAK

__all__ = ["Tensors", "TENSOR", "VALUE", "WEAK", "UNKNOWN", "FLOAT_TENSOR", "FLOAT_IF_TENSOR"]
