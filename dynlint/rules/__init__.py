"""The rule catalogue: one module (or sub-package) per family. `all_rules` imports every module of this package
and of its sub-packages (as Fixit finds its rules), and each registers its rules as it is imported: a new family
is a new module, with no list to keep."""
import functools
import importlib
import pkgutil
from typing import List, Type

from dynlint.core.rule import REGISTRY, Rule


@functools.lru_cache(maxsize=None)
def _import_families() -> None:
    for module in pkgutil.walk_packages(__path__, prefix=__name__ + "."):       # sub-packages' modules too
        importlib.import_module(module.name)


def all_rules() -> List[Type[Rule]]:
    _import_families()
    return [REGISTRY[c] for c in sorted(REGISTRY)]
