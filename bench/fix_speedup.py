"""What the fixes do to compiled speed: `dynlint check --fix --verify` on a copy of a project, safe tier and
safe + unsafe tier, one after the other in one run.

    python bench/fix_speedup.py [--project examples] [--device cpu|cuda] [--json OUT] [--markdown OUT]

Each tier fixes its own fresh copy of the project (the project itself is never written) and runs the examples
on the original code and on the fixed code (`--fix --verify`: same workers, same timing as `--verify`). The
table is built from the JSON report's `verify.fixes.examples`: per example, graphs, break sites, recompiles and
the speedup (median steady-state eager time / compiled time) on the original and on the fixed code, and
whether the outputs stayed the same. The original code is measured once per tier: the two "before" speedups
show how much a speedup moves between two measurements of the same code.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIERS = (("safe", ()), ("safe + unsafe", ("--unsafe-fixes",)))


def run_tier(project: Path, tmp: Path, name: str, extra, device: str) -> dict:
    copy = tmp / name.replace(" ", "").replace("+", "_")
    shutil.copytree(project, copy, ignore=shutil.ignore_patterns("__pycache__", ".dynlint_cache"))
    out = copy / "dynlint-fix-report.json"
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "dynlint", "check", ".", "--fix", *extra, "--verify", "--device",
                           device, "--no-cache", "--quiet", "--format", "json", "--output", str(out)],
                          cwd=copy, env=dict(os.environ, NO_COLOR="1"), capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        sys.exit(f"dynlint exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    doc = json.loads(out.read_text())
    versions = {k: doc["verify"][k] for k in ("device", "torch_version", "triton_version") if k in doc["verify"]}
    return {"tier": name, "wall_s": round(time.perf_counter() - start, 1), "summary": proc.stderr.strip(),
            "fixes": doc["verify"]["fixes"], "verify": versions}


def markdown(runs) -> str:
    def speed(side):
        return f"{side['speedup']:.2f}×" if side.get("speedup") else "–"

    v = runs[0]["verify"]
    lines = [f"Device: {v.get('device', '?')} · torch {v.get('torch_version', '?')}"
             + (f" · triton {v['triton_version']}" if v.get("triton_version") else ""), "",
             "| example | fixes | graphs | break sites | recompiles | speedup | outputs |",
             "|---|---|---|---|---|---|---|"]
    for r in runs:
        for e in r["fixes"]["examples"]:
            if not e["covers"]:
                continue
            b, a = e["before"], e["after"]
            status = {"match": "same", "mismatch": "**changed**"}.get(e["outputs"].get("status"), "–")
            lines.append(f"| {e['name']} | {r['tier']} | {b['graphs']} → {a['graphs']} | {b['break_sites']} → "
                         f"{a['break_sites']} | {b['recompiles']} → {a['recompiles']} | {speed(b)} → {speed(a)} | "
                         f"{status} |")
    lines.append("")
    for r in runs:
        lines.append(f"- {r['tier']}: {r['summary'].splitlines()[-1] if r['summary'] else ''}")
        for e in r["fixes"]["examples"]:
            if e.get("warning"):
                lines.append(f"  - warning, {e['name']}: {e['warning']}")
        for rb in r["fixes"]["rolled_back"]:
            lines.append(f"  - rolled back {rb['path']}: {'; '.join(rb['reasons'])}")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--project", type=Path, default=ROOT / "examples")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--json", type=Path, help="write both tiers' fix reports here")
    ap.add_argument("--markdown", type=Path, help="write the table here")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="dynlint-fix-speedup-") as tmp:
        runs = [run_tier(args.project.resolve(), Path(tmp), name, extra, args.device) for name, extra in TIERS]
    text = markdown(runs)
    print(text)
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1) + "\n")
    if args.markdown:
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
