"""The fixer on a real tree: `dynlint check --fix` (and with `--unsafe-fixes`) over a copy of a project, then
checks that what it wrote is sound as code.

    python bench/fix_sweep.py [TREE] [--markdown OUT] [--json OUT]     # default: transformers 5.4.0

For each tier (safe, then safe + unsafe), on a fresh copy of the tree (the tree itself is never written):

1. `dynlint check . --fix [--unsafe-fixes]` as a user runs it (`--no-cache`, default region detection);
2. every file it changed still compiles (`compile()`: valid Python, no SyntaxError);
3. no file it did not report as fixed changed (bytes compared with the original);
4. a second run changes no file (the fixes reach a fixed point: running `--fix` twice changes nothing);
5. the findings a fix removes are the ones it targets: a rule's findings never grow.

Reported per tier: files, fixes applied, files changed, and the findings per rule before and after. Nothing here
runs the fixed code (the corpus measurement, bench/fix_effect.py, does that under Dynamo); this is about never
writing broken or unstable code into a real project.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT / "bench" / ".data" / "transformers-5.4.0"
TIERS = (("safe", ()), ("safe + unsafe", ("--unsafe-fixes",)))
APPLIED = re.compile(r"Applied (\d+) fix(?:es)? to (\d+) files?")


def dynlint(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dynlint", "check", ".", "--no-cache", *args], cwd=cwd,
                          env=dict(os.environ, NO_COLOR="1"), capture_output=True, text=True)


def findings(cwd: Path) -> collections.Counter:
    r = dynlint(cwd, "--format", "json", "--exit-zero", "--quiet")
    doc = json.loads(r.stdout)
    return collections.Counter(f["code"] for f in doc["findings"])


def snapshot(tree: Path) -> dict:
    return {str(p.relative_to(tree)): p.read_bytes() for p in sorted(tree.rglob("*.py")) if p.is_file()}


def sweep_tier(tree: Path, tmp: Path, name: str, extra) -> dict:
    copy = tmp / re.sub(r"\W+", "_", name)
    shutil.copytree(tree, copy, ignore=shutil.ignore_patterns("__pycache__", ".dynlint_cache", "*.whl"))
    if not (copy / "pyproject.toml").exists():
        (copy / "pyproject.toml").write_text("[tool.dynlint]\n")
    original = snapshot(copy)
    before = findings(copy)
    start = time.perf_counter()
    first = dynlint(copy, "--fix", *extra)
    wall = time.perf_counter() - start
    fixed = snapshot(copy)
    changed = sorted(rel for rel in original if fixed.get(rel) != original[rel])
    broken = []
    for rel in changed:
        try:
            compile(fixed[rel], rel, "exec")
        except SyntaxError as e:
            broken.append(f"{rel}: {e}")
    m = APPLIED.search(first.stdout)        # the summary ends the text report
    second = dynlint(copy, "--fix", *extra)
    again = snapshot(copy)
    after = findings(copy)
    grew = {code: (before[code], after[code]) for code in after if after[code] > before[code]}
    return {"tier": name, "files": len(original), "wall_s": round(wall, 1), "exit": first.returncode,
            "fixes": int(m.group(1)) if m else 0, "files_reported": int(m.group(2)) if m else 0,
            "files_changed": len(changed), "not_compiling": broken,
            "second_run_fixes": len([rel for rel in again if again[rel] != fixed.get(rel)]),
            "second_run_summary": second.stdout.strip().splitlines()[-1:],
            "internal_errors": after.get("DYN001", 0) + before.get("DYN001", 0),
            "traceback": "Traceback" in first.stderr + second.stderr,
            "findings_before": dict(before), "findings_after": dict(after), "grew": grew,
            "changed": changed, "summary": first.stdout.strip().splitlines()[-1:], "stderr": first.stderr[-2000:]}


def markdown(tree: Path, runs) -> str:
    lines = [f"Tree: `{tree.name}` ({runs[0]['files']:,} files)", "",
             "| tier | fixes applied | files changed | changed files that do not compile | files a second run "
             "changes | rule whose findings grew | internal errors | wall s |",
             "|---|---:|---:|---:|---:|---|---:|---:|"]
    for r in runs:
        lines.append(f"| {r['tier']} | {r['fixes']:,} | {r['files_changed']:,} | {len(r['not_compiling'])} | "
                     f"{r['second_run_fixes']} | {', '.join(r['grew']) or 'none'} | {r['internal_errors']} | "
                     f"{r['wall_s']} |")
    lines += ["", "| rule | findings | after safe fixes | after safe + unsafe |", "|---|---:|---:|---:|"]
    before = runs[0]["findings_before"]
    for code in sorted(before):
        after = [r["findings_after"].get(code, 0) for r in runs]
        if any(a != before[code] for a in after):
            lines.append(f"| {code} | {before[code]:,} | " + " | ".join(f"{a:,}" for a in after) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("--markdown", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    if not args.tree.is_dir():
        sys.exit(f"{args.tree}: no such folder (bench/speed.py downloads transformers into bench/.data)")
    with tempfile.TemporaryDirectory(prefix="dynlint-fix-sweep-") as tmp:
        runs = [sweep_tier(args.tree.resolve(), Path(tmp), name, extra) for name, extra in TIERS]
    text = markdown(args.tree, runs)
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1) + "\n")
    bad = any(r["not_compiling"] or r["second_run_fixes"] or r["grew"] or r["internal_errors"] or r["traceback"]
              or r["files_changed"] != r["files_reported"] for r in runs)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
