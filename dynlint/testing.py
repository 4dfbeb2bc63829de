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
