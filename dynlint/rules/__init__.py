"""The rule catalogue: one module per family. `all_rules` imports every module of this package (as Fixit finds
its rules), and each registers its rules as it is imported: a new family is a new module, with no list to keep."""
import functools
import importlib
import pkgutil
from typing import List, Type

from dynlint.core.rule import REGISTRY, Rule


@functools.lru_cache(maxsize=None)
def _import_families() -> None:
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")


def all_rules() -> List[Type[Rule]]:
    _import_families()
    return [REGISTRY[c] for c in sorted(REGISTRY)]
