"""Names of a package that load on first use (PEP 562): importing the package imports none of its modules, so
`dynlint.runtime_check` and `dynlint.compiler` cost nothing (no torch) until a name of theirs is used. Outside
every layer, so that `compiler/`, which imports no other dynlint package, can use it too."""
from __future__ import annotations

import importlib
from typing import Callable, Dict, List, Tuple


def attributes(package: str, names: Dict[str, str]) -> Tuple[Callable[[str], object], List[str]]:
    """The package's `__getattr__` and `__all__`, for `names`: each public name -> the module that defines it."""
    def __getattr__(name: str):
        if name in names:
            return getattr(importlib.import_module(names[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__, sorted(names)
