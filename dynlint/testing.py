"""For tests and rule authors: the cases every rule's examples make, and the inline markers of labelled corpus
files (`# expect: DYN101`, `# ok`, `# miss: ...`, as pylint and semgrep fixtures read). Used by the test suite
and bench/accuracy.py."""
from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path
from typing import Dict, List, Sequence, Set, Tuple, Type

from dynlint.api import check
from dynlint.linter.config import Config
from dynlint.linter.rule import Rule
from dynlint.rules import all_rules
from dynlint.rules.torch_release import FAILED, NOTHING

ENTRY = "__dynlint_calls__"           # a corpus file's function that runs its code under Dynamo
MARKER = re.compile(r"#\s*(expect|ok|miss)\b:?\s*(.*)$")


# ---- the rules' own examples --------------------------------------------------------------------------------
def example_cases(kind: str, runnable: bool = False, rules: Sequence[Type[Rule]] = ()) -> List[tuple]:
    """(rule, index, example) for every example of `kind` ("INVALID", "VALID" or "FIX"); `runnable`: only those
    with calls to run under Dynamo."""
    attr = {"INVALID": "INVALID", "VALID": "VALID", "FIX": "FIX_EXAMPLES"}[kind]
    return [(r, i, ex) for r in (rules or all_rules()) for i, ex in enumerate(getattr(r, attr))
            if ex.calls or not runnable]


def case_ids(cases: Sequence[tuple], kind: str) -> List[str]:
    return [f"{r.code}-{kind}-{i}" + (f"-{ex.safety}" if kind == "FIX" else "") for r, i, ex in cases]


# ---- labelled corpus files ----------------------------------------------------------------------------------
def parse_markers(path: Path) -> Dict[int, Tuple[str, Set[str], str]]:
    """line -> (kind, codes, text) for every `# expect: ...`, `# ok`, `# miss: ...` comment."""
    out: Dict[int, Tuple[str, Set[str], str]] = {}
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        m = MARKER.search(tok.string)
        if not m:
            continue
        kind, rest = m.group(1), m.group(2).strip()
        codes = set(re.findall(r"DYN\d{3}", rest)) if kind == "expect" else set()
        out[tok.start[0]] = (kind, codes, rest)
    return out


def static_findings(path: Path):
    """dynlint's findings for one file, linted as a project of its own."""
    config = Config(root=path.parent.resolve(), regions="auto", select=("DYN",), preview=True)  # every rule
    return check([str(path)], config).findings


def findings_by_line(findings) -> Dict[int, Set[str]]:
    out: Dict[int, Set[str]] = {}
    for f in findings:
        out.setdefault(f.line, set()).add(f.code)
    return out


# ---- what Dynamo did where a finding stands (the rule proofs and the per-release table) ----------------------
# gb_types that name a frame skip rather than a primary cause (TorchRule.report adds them to findings)
SKIP_TYPES = frozenset({"graph break in loop", "Graph break under GenericContextWrappingVariable"})
# what each kind of rule predicts, as `observed` names it; NOTHING: it did not happen there
PREDICTED = {"hard-error": "error", "deprecation": "warning", "not-compiled": "not compiled",
             "recompile": "recompile", "break": "break"}


def proof_kind(rule: Type[Rule]) -> str:
    """How a rule's INVALID examples are proven: "hard-error", "deprecation", "not-compiled", "recompile" or
    "break"."""
    for tag in ("hard-error", "deprecation", "not-compiled"):
        if tag in rule.tags:
            return tag
    return "recompile" if rule.recompiles else "break"


def observed(rule: Type[Rule], finding, obs, path: str) -> Tuple[str, Tuple[str, ...]]:
    """What Dynamo did at `finding` (of `rule`, in the file `path` that the run `obs` of
    dynlint.compiler.harness.observe executed): (PREDICTED[kind] when what the rule predicts happened there,
    NOTHING when it did not, FAILED when the code failed otherwise; the gb_types seen there). Where the rule's
    own gb_types are among those seen, only they are kept; where none is, what Dynamo named instead (a release
    that renamed the break)."""
    kind = proof_kind(rule)
    wanted = set(rule.gb_types)

    def named(types) -> Tuple[str, ...]:
        types = set(types) - SKIP_TYPES
        return tuple(sorted(types & wanted or types))

    if kind == "hard-error":
        if obs.error is None:
            return NOTHING, ()
        text = str(obs.error)
        hit = [t for t in rule.gb_types if t in text]
        ours = type(obs.error).__module__.startswith("torch._dynamo")
        return (PREDICTED[kind], tuple(hit)) if hit or (ours and not wanted) else (FAILED, (type(obs.error).__name__,))
    if obs.error is not None:
        return FAILED, (f"{type(obs.error).__name__}: {str(obs.error).splitlines()[0][:120] if str(obs.error) else ''}",)
    if kind == "deprecation":
        hit = any(cat in ("FutureWarning", "DeprecationWarning") and Path(f).resolve() == Path(path).resolve()
                  and ln == finding.line for cat, _, f, ln in obs.warnings)
        return (PREDICTED[kind] if hit else NOTHING), ()
    if kind == "not-compiled":
        return (PREDICTED[kind] if obs.frames == 0 and not obs.breaks else NOTHING), ()
    if kind == "recompile":
        span = set(range(finding.line, max(finding.end_line, finding.line) + 1))
        hit = obs.recompiles and any(ls is None or ls & span for ls in obs.guard_lines(path))
        return (PREDICTED[kind] if hit else NOTHING), ()
    here = [b for b in obs.breaks if rule.scope == "site" or
            (b.path and Path(b.path).resolve() == Path(path).resolve() and b.line == finding.line)]
    types = named(t for b in here for t in b.gb_types)
    return (PREDICTED[kind], types) if here and (types or not wanted) else (NOTHING, ())
