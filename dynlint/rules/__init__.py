"""The rule catalogue: one module (or sub-package) per family. `all_rules` imports every module of this package
and of its sub-packages (as Fixit finds its rules), and each registers its rules as it is imported: a new family
is a new module, with no list to keep."""
import functools
import importlib
import pkgutil
from typing import List, Optional, Tuple, Type

from dynlint.linter.rule import REGISTRY, Rule
from dynlint.rules.measured import MEASURED

PREVIEW_BELOW = 0.9      # a rule less precise than this on real code (the zoo) runs only under --preview


@functools.lru_cache(maxsize=None)
def _import_families() -> None:
    for module in pkgutil.walk_packages(__path__, prefix=__name__ + "."):       # sub-packages' modules too
        if module.name != __name__ + ".measured":
            importlib.import_module(module.name)


def all_rules() -> List[Type[Rule]]:
    _import_families()
    return [REGISTRY[c] for c in sorted(REGISTRY)]


def precision(code: str) -> Optional[Tuple[float, int, int]]:
    """The rule's measured precision on real code, with its right findings and false alarms (rules/measured.py,
    written by bench/zoo/score.py); None where none of its findings could be judged."""
    right, false = MEASURED.get(code, {}).get("right", 0), MEASURED.get(code, {}).get("false", 0)
    return (right / (right + false), right, false) if right + false else None


def recall(code: str) -> Optional[Tuple[float, int, int]]:
    """The rule's measured recall on real code: of the zoo's break sites of the kinds it predicts, the share inside
    its findings, with the counts; None where the zoo has none of those."""
    m = MEASURED.get(code, {})
    return (m["kind_found"] / m["of"], m["kind_found"], m["of"]) if m.get("of") else None


def measured_low(right: int, false: int) -> bool:
    """Precision below PREVIEW_BELOW on real code, on evidence enough: a single false alarm (6 right and 1 wrong
    is 0.86; 0 right and 1 wrong is 0) does not turn a rule off; two do."""
    return false >= 2 and right / (right + false) < PREVIEW_BELOW


def is_preview(code: str) -> bool:
    """Off unless --preview: marked so by the rule itself, or measured low on real code (`measured_low`)."""
    _import_families()
    m = MEASURED.get(code, {})
    return bool(getattr(REGISTRY.get(code), "preview", "")) or measured_low(m.get("right", 0), m.get("false", 0))


def active_rules(config) -> List[Type[Rule]]:
    """The rules a check runs: those the configuration selects, preview rules only with `preview` on."""
    return [r for r in all_rules() if config.enabled(r.code) and (config.preview or not is_preview(r.code))]


def checked_rules(config) -> List[Type[Rule]]:
    """The active rules, and with a frame rule among them (DYN509), or one that reads its unit's breaks
    (`reads_breaks`: DYN510), every default graph-break rule: they work from where the graph breaks, whether or
    not those findings are selected (the engine drops findings of rules the configuration does not select)."""
    rules = active_rules(config)
    if any(r.scope == "frame" or r.reads_breaks for r in rules):
        rules += [r for r in all_rules() if r not in rules and r.scope == "region" and not r.recompiles and
                  not is_preview(r.code)]
    return rules
