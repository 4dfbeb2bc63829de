"""The rule class: one source of truth for a rule's code, name, message, fix, predicted graph-break
types, docs and examples. Every front end (text, JSON, SARIF, flake8, `dynlint rule`, docs/rules.md)
renders from these attributes; the examples are the rule's tests.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import ClassVar, Dict, List, Optional, Sequence, Tuple, Type

import libcst as cst

FAMILIES = {
    "1": "data-dependent control flow",
    "2": "host syncs and scalar extraction",
    "3": "Python side effects",
    "4": "data-dependent shapes",
    "5": "recompile hazards",
    "6": "calls Dynamo cannot trace",
    "7": "compile set-up",
    "9": "observed at runtime",
}


@dataclass(frozen=True)
class Example:
    """A code example. `calls` are Python statements run after the code (with `torch` imported) to
    exercise it under real Dynamo in the test suite; an example without calls is checked statically only.
    """
    code: str
    calls: Tuple[str, ...] = ()

    def __init__(self, code: str, *calls: str):
        object.__setattr__(self, "code", textwrap.dedent(code).strip("\n") + "\n")
        object.__setattr__(self, "calls", tuple(calls))


class Rule:
    """Base class. Subclasses visit libcst nodes (`visit_Call`, `visit_If`, ...) and call `self.report`.

    `scope` says where the rule looks: "region" rules see only code torch.compile traces; "site" rules see
    every statement that sets up or calls a compiled function (the index marks them).
    """
    code: ClassVar[str]
    name: ClassVar[str]                    # kebab-case, names the bad pattern
    message: ClassVar[str]                 # the problem; may use {placeholders} filled by report()
    fix: ClassVar[str]                     # the remedy
    gb_types: ClassVar[Tuple[str, ...]] = ()   # Dynamo gb_type strings this rule predicts (any of them)
    recompiles: ClassVar[bool] = False     # predicts recompiles rather than graph breaks
    severity: ClassVar[str] = "warning"
    precision: ClassVar[str] = "high"      # SARIF precision: very-high | high | medium | low
    scope: ClassVar[str] = "region"
    tags: ClassVar[Tuple[str, ...]] = ()
    why: ClassVar[str] = ""                # "Why is this bad?"
    VALID: ClassVar[Sequence[Example]] = ()
    INVALID: ClassVar[Sequence[Example]] = ()

    def __init__(self, ctx) -> None:
        self.ctx = ctx

    def report(self, node: cst.CSTNode, message: Optional[str] = None, **fmt) -> None:
        self.ctx.report(self, node, message or self.message.format(**fmt))

    # ---- rendered documentation -------------------------------------------------------------
    @classmethod
    def summary(cls) -> str:
        """'What it does': the first paragraph of the docstring."""
        return " ".join(textwrap.dedent(cls.__doc__ or "").strip().split("\n\n")[0].split())

    @classmethod
    def family(cls) -> str:
        return FAMILIES.get(cls.code[3], "other")

    @classmethod
    def all_tags(cls) -> Tuple[str, ...]:
        kind = "recompile" if cls.recompiles else "graph-break"
        return (kind, "torch.compile", cls.family().replace(" ", "-"), *cls.tags)

    @classmethod
    def doc_anchor(cls) -> str:
        return f"{cls.code.lower()}-{cls.name}"

    @classmethod
    def markdown(cls, heading: str = "##") -> str:
        lines = [f"{heading} {cls.code} `{cls.name}`", ""]
        lines += [f"*Family:* {cls.family()} · *Severity:* {cls.severity}"]
        if cls.gb_types:
            kind = "Predicted recompile / graph-break types" if cls.recompiles else "Predicted Dynamo graph-break types"
            lines += ["", f"*{kind}:* " + ", ".join(f"`{t}`" for t in cls.gb_types)]
        elif cls.recompiles:
            lines += ["", "*Predicts:* recompiles (guard failures), not graph breaks"]
        lines += ["", "### What it does", "", cls.summary(), "", "### Why is this bad?", "", textwrap.dedent(cls.why).strip()]
        if cls.INVALID:
            lines += ["", "### Example", "", "```python", cls.INVALID[0].code.rstrip(), "```"]
        if cls.VALID:
            lines += ["", "### Use instead", "", cls.fix, "", "```python", cls.VALID[0].code.rstrip(), "```"]
        return "\n".join(lines) + "\n"

    @classmethod
    def text(cls) -> str:
        """Plain-text help (for `dynlint rule CODE` and SARIF help.text)."""
        md = cls.markdown("#")
        return md.replace("```python\n", "").replace("```\n", "").replace("`", "").replace("*", "")


REGISTRY: Dict[str, Type[Rule]] = {}


def register(cls: Type[Rule]) -> Type[Rule]:
    assert cls.code not in REGISTRY, f"duplicate rule code {cls.code}"
    for attr in ("code", "name", "message", "fix", "why"):
        assert getattr(cls, attr, ""), f"{cls.__name__} lacks {attr}"
    assert cls.__doc__, f"{cls.__name__} lacks a docstring"
    REGISTRY[cls.code] = cls
    return cls


def all_rules() -> List[Type[Rule]]:
    import dynlint.rules  # noqa: F401  (imports every family, which registers its rules)
    return [REGISTRY[c] for c in sorted(REGISTRY)]
