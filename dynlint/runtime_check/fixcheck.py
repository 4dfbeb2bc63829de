"""`dynlint check --fix --verify`: run the examples on the original code and on the fixed code, and roll back
the files of every fix an example shows to be wrong.

An example *covers* a changed file when it ran one of the file's changed lines (before or after the fixes).
For each example, comparing its run on the fixed code with its run on the original:

* outputs changed: the fixed code's outputs (eager, then compiled) differ from the original code's eager outputs,
  or the fixed code fails where the original ran -- every file the example covers is restored;
* a break at a fixed line remains: in one changed region (a diff hunk) Dynamo still breaks for every reason it
  broke for before, or for a new one -- that file is restored.

A file is restored as a whole, atomically, to the bytes it had before `--fix`. A changed file no example ran
stays fixed, reported as not verified. Pure functions of the two runs: `judge` decides, `FixVerification`
renders; the command line (dynlint/cli.py) runs the examples and writes the files.
"""
from __future__ import annotations

import difflib
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple

from dynlint.linter.writes import write_atomic
from dynlint.linter.words import plural
from dynlint.runtime_check.results import ExampleResult

Range = Tuple[int, int]                  # first, last line (1-based, inclusive); empty when last < first


@dataclass(frozen=True)
class Hunk:
    """One changed region of a fixed file: its lines in the original text and in the fixed text."""
    path: str
    before: Range
    after: Range

    def label(self) -> str:
        first, last = self.before
        return f"{self.path}:{first}" + (f"-{last}" if last > first else "")


def hunks(path: str, before: str, after: str) -> List[Hunk]:
    a, b = before.splitlines(), after.splitlines()
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            out.append(Hunk(path, (i1 + 1, i2), (j1 + 1, j2)))
    return out


def _in(line: int, r: Range) -> bool:
    return r[0] <= line <= r[1]


def _ran(result: ExampleResult, path: str, r: Range) -> bool:
    lines = result.executed_lines().get(path, frozenset())
    return any(_in(n, r) for n in lines)


def _break_types(result: ExampleResult, path: str, r: Range) -> Set[str]:
    return {b.gb_types[0] for b in result.graph_breaks if b.gb_types and b.path == path and _in(b.line, r)}


@dataclass(frozen=True)
class FixedExample:
    """One example, run on the original code (`before`) and on the fixed code (`after`)."""
    before: ExampleResult
    after: ExampleResult
    covers: Tuple[str, ...] = ()                     # changed files whose changed lines it ran
    problems: Tuple[Tuple[str, str], ...] = ()       # (file to restore, why)
    note: str = ""                                   # why it verifies nothing (it failed on the original code)
    warning: str = ""                                # the fixed code recompiles more (`exposed`)

    @property
    def name(self) -> str:
        return self.before.name

    def to_dict(self) -> dict:
        def side(r: ExampleResult) -> dict:
            return {"outcome": r.outcome, "graphs": len(r.graphs), "break_sites": r.break_sites,
                    "recompiles": len(r.recompiles), "speedup": r.speedup, "eager_ms": r.eager_ms,
                    "compiled_ms": r.compiled_ms}
        return {"name": self.name, "before": side(self.before), "after": side(self.after),
                "outputs": self.after.against_original.to_dict(), "covers": list(self.covers),
                "problems": [{"path": p, "reason": why} for p, why in self.problems], "note": self.note,
                "warning": self.warning}


@dataclass(frozen=True)
class FixVerification:
    examples: Tuple[FixedExample, ...]
    rolled_back: Tuple[Tuple[str, Tuple[str, ...]], ...]      # (file, reasons), files restored to their original
    kept: Tuple[str, ...]                                      # fixed files an example verified
    unverified: Tuple[str, ...]                                # fixed files no example ran
    fixes: Tuple[Tuple[str, int], ...] = ()                    # (file, fixes applied to it)

    @property
    def restored(self) -> Tuple[str, ...]:
        return tuple(path for path, _ in self.rolled_back)

    def to_dict(self) -> dict:
        fixes = dict(self.fixes)
        return {"examples": [e.to_dict() for e in self.examples],
                "rolled_back": [{"path": p, "fixes": fixes.get(p, 0), "reasons": list(r)} for p, r in self.rolled_back],
                "kept": [{"path": p, "fixes": fixes.get(p, 0)} for p in self.kept],
                "unverified": [{"path": p, "fixes": fixes.get(p, 0)} for p in self.unverified]}

    def render_text(self) -> str:
        rows = [("example", "graphs", "breaks", "recompiles", "speedup", "outputs", "fixes")]
        for e in self.examples:
            b, a = e.before, e.after
            rows.append((e.name, f"{_count(b, len(b.graphs))} -> {_count(a, len(a.graphs))}",
                         f"{_count(b, b.break_sites)} -> {_count(a, a.break_sites)}",
                         f"{_count(b, len(b.recompiles))} -> {_count(a, len(a.recompiles))}",
                         f"{_speed(b)} -> {_speed(a)}", _outputs(e),
                         "rolled back" if e.problems else ("kept" if e.covers else (e.note and "-") or "none run")))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["Fixes verified (original -> fixed):"]
        for n, row in enumerate(rows):
            lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
            if n == 0:
                lines.append("  " + "  ".join("-" * w for w in widths))
        fixes = dict(self.fixes)
        for path, reasons in self.rolled_back:
            lines.append(f"Rolled back {path} ({plural(fixes.get(path, 0), 'fix')}): " + "; ".join(reasons))
        if self.kept:
            lines.append("Verified and kept: " + ", ".join(self.kept))
        if self.unverified:
            lines.append("Not verified (no example runs their changed lines), kept: " + ", ".join(self.unverified))
        for e in self.examples:
            if e.note:
                lines.append(f"  {e.name}: {e.note}")
            if e.warning:
                lines.append(f"Warning: {e.name}: {e.warning}")
        return "\n".join(lines) + "\n"


def _count(r: ExampleResult, n: int) -> str:
    return str(n) if r.phase in ("compiled", "compare", "timing", "done") else "-"


def _speed(r: ExampleResult) -> str:
    return f"{r.speedup:.2f}x" if r.speedup else "-"


def _outputs(e: FixedExample) -> str:
    status = e.after.against_original.status
    return {"match": "same", "mismatch": "CHANGED"}.get(status, "-")



def exposed(b: ExampleResult, a: ExampleResult, unsafe_fixes: Sequence[Tuple[str, int, str]] = ()) -> str:
    """When the fixed code (`a`) recompiles more than the original (`b`): what the new recompiles guard on, and
    the finding whose unsafe fix removes them (`unsafe_fixes`: (path, line, code)). A break can hide a recompile
    hazard (Dynamo never compiled the code that reads the guarded value); once the break is gone, the hazard
    costs a compile per call (`self.calls += 1` on an int attribute)."""
    if not (b.outcome == "ok" and a.outcome == "ok" and len(a.recompiles) > len(b.recompiles)):
        return ""
    failure = next((r.failures[0] for r in a.recompiles if r.failures), None)
    where = hint = ""
    if failure is not None:
        where = f": guard `{failure.guard}`" + (f" ({failure.path}:{failure.line})" if failure.line else "")
        hint = next((f"; --unsafe-fixes has a fix for it ({code} at {path}:{line})"
                     for path, line, code in unsafe_fixes if (path, line) == (failure.path, failure.line)), "")
    return (f"recompiles {len(b.recompiles)} -> {len(a.recompiles)}, speedup {_speed(b)} -> {_speed(a)}: "
            f"with the breaks gone, Dynamo compiles code that recompiles{where}{hint}")


def judge(before: Sequence[ExampleResult], after: Sequence[ExampleResult], texts: Dict[str, Tuple[str, str]],
          applied: Optional[Dict[str, int]] = None, unsafe_fixes: Sequence[Tuple[str, int, str]] = ()
          ) -> FixVerification:
    """Decide, from the runs on the original code (`before`) and on the fixed code (`after`), which fixed files
    to restore. texts: file -> (original text, fixed text); unsafe_fixes: (path, line, code) of the findings left
    that --unsafe-fixes would fix (named when one is where new recompiles come from)."""
    regions = {path: hunks(path, old, new) for path, (old, new) in sorted(texts.items())}
    by_key = {(r.path, r.factory): r for r in after}
    examples: List[FixedExample] = []
    restore: Dict[str, List[str]] = {}
    ran: Set[str] = set()
    for b in before:
        a = by_key.get((b.path, b.factory))
        if a is None:
            continue
        covered = [h for hs in regions.values() for h in hs if _ran(b, h.path, h.before) or _ran(a, h.path, h.after)]
        covers = tuple(sorted({h.path for h in covered}))
        ran.update(covers)
        if not covers:
            examples.append(FixedExample(b, a))
            continue
        if b.outcome != "ok":
            examples.append(FixedExample(b, a, covers, note=f"failed on the original code ({b.outcome}): "
                                                             "nothing to compare with"))
            continue
        problems: List[Tuple[str, str]] = []
        if a.outcome != "ok":
            first = a.message.strip().splitlines()[0] if a.message.strip() else a.outcome
            problems += [(p, f"{b.name}: the fixed code fails ({first})") for p in covers]
        elif a.against_original.status == "mismatch":
            what = f"{a.against_original.where}: {a.against_original.detail}".strip(": ")
            problems += [(p, f"{b.name}: outputs changed ({what})") for p in covers]
        else:
            for h in covered:
                was, now = _break_types(b, h.path, h.before), _break_types(a, h.path, h.after)
                if now - was:
                    problems.append((h.path, f"{b.name}: new graph break at {h.path}:{h.after[0]} "
                                             f"({', '.join(sorted(now - was))})"))
                elif was and was <= now:
                    problems.append((h.path, f"{b.name}: the graph break at {h.label()} remains "
                                             f"({', '.join(sorted(was))})"))
        for path, why in problems:
            if why not in restore.setdefault(path, []):
                restore[path].append(why)
        examples.append(FixedExample(b, a, covers, tuple(problems), warning=exposed(b, a, unsafe_fixes)))
    rolled = tuple((p, tuple(r)) for p, r in sorted(restore.items()))
    kept = tuple(p for p in sorted(regions) if p in ran and p not in restore)
    unverified = tuple(p for p in sorted(regions) if p not in ran)
    return FixVerification(tuple(examples), rolled, kept, unverified, tuple(sorted((applied or {}).items())))


def verify_fixes(outcome, verify, recheck, root: Path):
    """`--fix --verify`: run the examples on the original code, write the fixes, run them again, and restore
    (atomically) the files whose fixes an example shows to be wrong. `outcome`: the fixer's FixOutcome;
    `verify(static_findings, **outputs)` runs the examples (a VerifyReport); `recheck()` runs the static pass.
    Returns (FixVerification, the verify report on the code as left, the static result on it, problems to tell)."""
    originals = {}
    for rel in outcome.after:
        try:
            originals[rel] = outcome.paths[rel].read_bytes()
        except OSError as e:
            outcome.problems.append(f"{rel}: cannot read it: {e}")
    with tempfile.TemporaryDirectory(prefix="dynlint-fix-verify-") as outputs:
        before = verify((), save_outputs=Path(outputs))
        failed = outcome.write()
        after = verify(outcome.result.findings, reference_outputs=Path(outputs))
    problems = outcome.problems + failed
    written = [rel for rel in outcome.after if rel in originals and not any(f.startswith(f"{rel}:") for f in failed)]
    unsafe = [(f.path, f.line, f.code) for f in outcome.result.findings
              if f.autofix is not None and f.autofix.safety == "unsafe"]
    verification = judge(before.examples, after.examples, {rel: (outcome.before[rel], outcome.after[rel])
                                                           for rel in written}, outcome.applied, unsafe)
    if not verification.rolled_back:
        return verification, after, outcome.result, problems
    for rel in verification.restored:
        write_atomic(outcome.paths[rel], originals[rel], root)
    result = recheck()                      # the code as left: some files fixed, some restored
    return verification, verify(result.findings), result, problems
