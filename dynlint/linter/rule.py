"""The rule class: one source of truth for a rule's code, name, message, fix, predicted graph-break
types, docs and examples. Every front end (text, JSON, SARIF, flake8, `dynlint rule`, docs/rules.md)
renders from these attributes; the examples are the rule's tests.
"""
from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Dict, Optional, Sequence, Tuple, Type

if TYPE_CHECKING:           # the contract and the docs need no parser: flake8 loads this at every start
    import libcst as cst

HOMEPAGE = "https://github.com/dynlint/dynlint"
RULES_DOC = f"{HOMEPAGE}/blob/main/docs/rules.md"      # where every code's section is (doc_url)

FAMILIES = {
    "0": "problems of the run",
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


@dataclass(frozen=True)
class FixExample:
    """An automatic fix, shown and tested: `dynlint check --fix` (with `--unsafe-fixes` when `safety` is
    "unsafe") turns `before` into exactly `after`. `calls`, as in Example, run both under Dynamo in the tests:
    the break the rule predicts is gone and the outputs are the original eager ones."""
    before: str
    after: str
    calls: Tuple[str, ...] = ()
    safety: str = "safe"

    def __init__(self, before: str, after: str, *calls: str, safety: str = "safe"):
        object.__setattr__(self, "before", textwrap.dedent(before).strip("\n") + "\n")
        object.__setattr__(self, "after", textwrap.dedent(after).strip("\n") + "\n")
        object.__setattr__(self, "calls", tuple(calls))
        object.__setattr__(self, "safety", safety)


MAX_QUOTED = 200        # characters of one message placeholder's value (source_of already keeps most to 60)


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
    # reads the graph breaks of its unit in `finish` (a value made at a break, a frame resumed after one): the
    # break rules run with it, selected or not (rules.checked_rules); a frame rule always does
    reads_breaks: ClassVar[bool] = False
    tags: ClassVar[Tuple[str, ...]] = ()
    # A preview rule runs only with --preview: set here when its finding depends on what the code cannot show
    # (how callers vary a value); rules measured below 0.9 precision on real code are preview too (rules/)
    preview: ClassVar[str] = ""           # why, when set
    why: ClassVar[str] = ""                # "Why is this bad?"
    VALID: ClassVar[Sequence[Example]] = ()
    INVALID: ClassVar[Sequence[Example]] = ()
    # Automatic fix (`dynlint check --fix`): what it does, and its tier: "safe" (applied by --fix; such a rule
    # may still offer an unsafe variant where it cannot prove the meaning is kept, `fix_note` says when),
    # "unsafe" (only with --unsafe-fixes), "" (no automatic fix). `autofix()` builds it; FIX_EXAMPLES test it.
    fix_safety: ClassVar[str] = ""
    fix_title: ClassVar[str] = ""
    fix_note: ClassVar[str] = ""
    FIX_EXAMPLES: ClassVar[Sequence[FixExample]] = ()

    def __init__(self, ctx) -> None:
        self.ctx = ctx

    def report(self, node: cst.CSTNode, message: Optional[str] = None, **fmt) -> None:
        self.ctx.report(self, node, message or self.format_message(**fmt), autofix=self.plan_fix(node))

    def format_message(self, **fmt) -> str:
        """The message with its placeholders filled, each text value capped at MAX_QUOTED characters: values
        quote the user's code (expressions, names), which a hostile file can make megabytes long."""
        return self.message.format(**{k: v if not isinstance(v, str) or len(v) <= MAX_QUOTED
                                      else v[:MAX_QUOTED - 3] + "..." for k, v in fmt.items()})

    def autofix(self, node: cst.CSTNode):
        """The fix of the finding at `node`, or None where none keeps the code working: a
        `dynlint.fixes.common.Autofix` (libcst nodes of the code being checked and their replacements).
        Called while the walk stands at `node` (self.ctx.parents are its ancestors)."""
        return None

    def plan_fix(self, node: cst.CSTNode):
        if not self.fix_safety:
            return None
        try:
            return self.autofix(node)
        except Exception:       # a bug in a fix must not lose the finding; the fix tests catch it
            return None

    @classmethod
    def on_release(cls, finding, release: str, settings: frozenset = frozenset()):
        """`finding` as it stands on the torch `release` the check predicts for (a release "X.Y", or "all"),
        with the Dynamo `settings` the project's code makes ((key, value) pairs): itself, changed, or None
        where it does not happen there. The engine asks after the walk."""
        return finding

    @classmethod
    def on_releases(cls) -> list:
        """Markdown lines on what the rule's findings do on each torch release ([] where nothing is known)."""
        return []

    def finish(self, findings: Sequence) -> None:
        """After the walk of a unit, with every rule's findings there: a post-pass (as ruff's RUF100 runs after
        the other rules). A rule that judges other rules' findings reports from here, never from a visit."""

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
    def doc_url(cls) -> str:
        return f"{RULES_DOC}#{cls.doc_anchor()}"

    @classmethod
    def markdown(cls, heading: str = "##") -> str:
        lines = [f"{heading} {cls.code} `{cls.name}`", ""]
        lines += [f"*Family:* {cls.family()} · *Severity:* {cls.severity}"]
        if cls.gb_types:
            kind = "Predicted recompile / graph-break types" if cls.recompiles else "Predicted Dynamo graph-break types"
            lines += ["", f"*{kind}:* " + ", ".join(f"`{t}`" for t in cls.gb_types)]
        elif cls.recompiles:
            lines += ["", "*Predicts:* recompiles (guard failures), not graph breaks"]
        if cls.preview:
            lines += ["", f"*Preview rule:* runs only with `--preview`: {cls.preview}."]
        lines += ["", "### What it does", "", cls.summary(), "", "### Why is this bad?", "", textwrap.dedent(cls.why).strip()]
        lines += cls.on_releases()
        if cls.INVALID:
            lines += ["", "### Example", "", "```python", cls.INVALID[0].code.rstrip(), "```"]
        if cls.VALID:
            lines += ["", "### Use instead", "", cls.fix, "", "```python", cls.VALID[0].code.rstrip(), "```"]
        if cls.fix_safety:
            tier = "safe (applied by `dynlint check --fix`)" if cls.fix_safety == "safe" else \
                "unsafe (applied only with `dynlint check --fix --unsafe-fixes`)"
            lines += ["", "### Automatic fix", "", f"*Fix safety:* {tier}", "", cls.fix_title]
            if cls.fix_note:
                lines += ["", " ".join(textwrap.dedent(cls.fix_note).split())]
            shown = [next((e for e in cls.FIX_EXAMPLES if e.safety == s), None) for s in ("safe", "unsafe")]
            for ex in filter(None, shown):
                flags = "--fix --unsafe-fixes" if ex.safety == "unsafe" else "--fix"
                lines += ["", f"`dynlint check {flags}` turns", "",
                          "```python", ex.before.rstrip(), "```", "", "into", "", "```python", ex.after.rstrip(),
                          "```"]
        return "\n".join(lines) + "\n"

    @classmethod
    def text(cls) -> str:
        """Plain-text help (for `dynlint rule CODE` and SARIF help.text)."""
        out, code = [], False
        for line in cls.markdown("#").splitlines(keepends=True):
            if line.startswith("```"):
                code = not code
                continue
            out.append(line if code else _EMPHASIS.sub(r"\1", line.replace("`", "")))
        return "".join(out)


# the markdown's emphasis (`*Family:*`, `*Fix safety:*`): a plain `*` in prose (`y * 0.5`, `*args`) stays
_EMPHASIS = re.compile(r"\*([^*`\n]+?:)\*")
REGISTRY: Dict[str, Type[Rule]] = {}


def register(cls: Type[Rule]) -> Type[Rule]:
    assert cls.code not in REGISTRY, f"duplicate rule code {cls.code}"
    for attr in ("code", "name", "message", "fix", "why"):
        assert getattr(cls, attr, ""), f"{cls.__name__} lacks {attr}"
    assert cls.__doc__, f"{cls.__name__} lacks a docstring"
    REGISTRY[cls.code] = cls
    return cls
