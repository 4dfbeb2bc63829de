"""Robustness sweep: run `dynlint check` over every `.py` file of the standard library and of the installed
site-packages (torch included) and count what went wrong.

    python bench/sweep.py                    # stdlib + every site-packages folder, all cores
    python bench/sweep.py --compare-j1       # also re-run each chunk with -j1 and diff the findings
    python bench/sweep.py PATH ...           # other trees

Each tree is checked as its own project, exactly as a user runs the CLI (`--regions all`, so every function
goes through libcst and every rule; `--no-cache`, so nothing is written into the trees), in chunks of files
so the command line stays short. Every `.py` file is listed here, not by dynlint's folder walk, so nothing is
skipped (dynlint skips `build/`, `site-packages/`, .gitignore'd paths and the like when it walks a folder).

Reported: files, lines, time, DYN000 (legitimate parse errors: Python 2 files, lib2to3 test data, ... grouped
by message), DYN001 internal errors (must be 0), crashes (a run that did not exit 0/1 with a JSON report, or
printed a traceback: must be 0), leftover processes (anything still alive in the run's process group after it
exited: must be 0), and with --compare-j1 findings that differ between -jN and -j1 (must be 0).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import site
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

SKIP_DIRS = {"__pycache__"}
ROOT = Path(__file__).resolve().parent.parent      # the checkout whose dynlint is swept (not an installed one)


def default_trees() -> list:
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    sites = []
    for p in [*site.getsitepackages(), site.getusersitepackages(), sysconfig.get_paths()["purelib"],
              sysconfig.get_paths()["platlib"]]:
        p = Path(p)
        if p.is_dir() and p.resolve() not in sites:
            sites.append(p.resolve())
    return [stdlib, *sites]


def python_files(tree: Path, skip: set) -> list:
    """Every .py file under tree (symlinks not followed), minus the other trees nested in it."""
    out = []
    for dirpath, dirnames, filenames in os.walk(tree, followlinks=False):
        d = Path(dirpath)
        dirnames[:] = sorted(n for n in dirnames if n not in SKIP_DIRS and (d / n).resolve() not in skip)
        out += [d / n for n in sorted(filenames) if n.endswith(".py") and (d / n).is_file()]
    return out


def leftover(pgid: int) -> list:
    """Processes still alive in the process group the run was started in."""
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[2]) == pgid and fields[0] != "Z":
                    pids.append(int(d))
            except (OSError, ValueError, IndexError):
                pass
    return pids


def run_chunk(project: Path, rels: list, jobs: int, timeout: float, config: Path) -> dict:
    """One `dynlint check` over rels (relative to project, the tree), configured by `config` (a neutral
    pyproject.toml outside the tree); what it reported and how it ended."""
    fd, out = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    cmd = [sys.executable, "-m", "dynlint", "check", "--regions", "all", "--no-cache", "-j", str(jobs),
           "--config", str(config), "--format", "json", "--output", out, *rels]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, env=dict(os.environ, NO_COLOR="1", PYTHONPATH=os.pathsep.join(
                                [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])))
    try:
        _, err = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        _, err = proc.communicate()
        timed_out = True
    wall = time.perf_counter() - start
    time.sleep(0.2)                         # let workers that are merely exiting go
    left = leftover(proc.pid)
    for pid in left:                        # do not let a bad run poison the next one
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    try:
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        doc = None
    finally:
        os.unlink(out)
    stderr = err.decode("utf-8", "replace")
    crashed = timed_out or proc.returncode not in (0, 1, 2) or doc is None or "Traceback" in stderr
    return {"rc": proc.returncode, "wall": wall, "doc": doc, "stderr": stderr, "crashed": crashed,
            "timed_out": timed_out, "leftover": left}


def category(message: str) -> str:
    """Group DYN000 messages: drop positions, names and quoted text."""
    m = re.sub(r"^cannot parse file: ", "", message)
    m = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "…", m)
    m = re.sub(r"\(.*\)", "(…)", m)
    m = re.sub(r"\d+", "N", m)
    return m[:90]


def sweep_tree(tree: Path, skip: set, jobs: int, chunk: int, timeout: float, compare: bool, log) -> dict:
    files = python_files(tree, skip)
    lines = size = 0
    for f in files:
        try:
            data = f.read_bytes()
        except OSError:
            continue
        lines += data.count(b"\n")
        size += len(data)
    with tempfile.TemporaryDirectory(prefix="dynlint-sweep-") as tmp:
        # the tree is checked where it is (a link to it would be a link out of the project: skipped unread)
        project, config = tree, Path(tmp) / "pyproject.toml"
        config.write_text("[tool.dynlint]\n")
        rels = [f.relative_to(tree).as_posix() for f in files]
        totals = collections.Counter()
        dyn000, dyn001, crashes, lost = collections.Counter(), [], [], []
        dyn000_where = []
        left, wall = [], 0.0
        for i in range(0, len(rels), chunk):
            part = rels[i:i + chunk]
            r = run_chunk(project, part, jobs, timeout, config)
            wall += r["wall"]
            left += r["leftover"]
            findings = r["doc"]["findings"] if r["doc"] else []
            for f in findings:
                totals[f["code"]] += 1
                if f["code"] == "DYN000":
                    dyn000[category(f["message"])] += 1
                    dyn000_where.append(f"{f['path']}:{f['line']}: {f['message'][:200]}")
                elif f["code"] == "DYN001":
                    dyn001.append(f"{f['path']}:{f['line']}: {f['message'][:300]}")
            if r["crashed"]:
                crashes.append(f"{part[0]} .. {part[-1]}: rc={r['rc']} timed_out={r['timed_out']}\n"
                               f"{r['stderr'][-3000:]}")
            if compare and r["doc"]:
                r1 = run_chunk(project, part, 1, timeout, config)
                key = lambda f: (f["path"], f["line"], f["column"], f["code"], f["message"])   # noqa: E731
                a = {key(f) for f in findings}
                b = {key(f) for f in (r1["doc"]["findings"] if r1["doc"] else [])}
                lost += [f"-j{jobs} only: {k}" for k in sorted(a - b)] + [f"-j1 only: {k}" for k in sorted(b - a)]
                left += r1["leftover"]
            log(f"  {tree.name}: {min(i + chunk, len(rels))}/{len(rels)} files, {wall:.0f} s, "
                f"DYN001 {len(dyn001)}, crashes {len(crashes)}")
    return {"tree": str(tree), "files": len(files), "lines": lines, "bytes": size, "wall_s": round(wall, 1),
            "findings": sum(totals.values()), "by_code": dict(sorted(totals.items())),
            "dyn000": sum(dyn000.values()), "dyn000_kinds": dict(dyn000.most_common()), "dyn000_details": dyn000_where,
            "dyn001": len(dyn001), "dyn001_details": dyn001, "crashes": len(crashes), "crash_details": crashes,
            "findings_lost": len(lost) if compare else None, "lost_details": lost[:50],
            "leftover_processes": len(left)}


def markdown(results: list, jobs: int) -> str:
    rows = ["| tree | files | lines | wall s | findings | DYN000 | DYN001 | crashes | leftover processes | "
            "findings lost (-jN vs -j1) |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        lost = "not compared" if r["findings_lost"] is None else r["findings_lost"]
        rows.append(f"| `{r['tree']}` | {r['files']:,} | {r['lines']:,} | {r['wall_s']} | {r['findings']:,} | "
                    f"{r['dyn000']} | {r['dyn001']} | {r['crashes']} | {r['leftover_processes']} | {lost} |")
    kinds = collections.Counter()
    for r in results:
        kinds.update(r["dyn000_kinds"])
    rows += ["", f"-j{jobs}. DYN000 by message:", ""] + [f"- {n} × {k}" for k, n in kinds.most_common()]
    return "\n".join(rows) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trees", nargs="*", help="folders to sweep (default: the stdlib and every site-packages)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--chunk", type=int, default=1500, help="files per dynlint run")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per dynlint run")
    ap.add_argument("--compare-j1", action="store_true", help="re-run each chunk with -j1 and diff the findings")
    ap.add_argument("--json", metavar="FILE", help="write the full results (with details) to FILE")
    args = ap.parse_args()
    trees = [Path(t).resolve() for t in args.trees] or default_trees()
    log = lambda msg: print(msg, file=sys.stderr, flush=True)     # noqa: E731
    results = []
    for tree in trees:
        skip = {t for t in trees if t != tree}
        log(f"sweeping {tree}")
        results.append(sweep_tree(tree, skip, args.jobs, args.chunk, args.timeout, args.compare_j1, log))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    for r in results:
        for d in r["dyn001_details"][:20] + r["crash_details"][:5] + r["lost_details"][:20]:
            print(d, file=sys.stderr)
    print(markdown(results, args.jobs))
    bad = sum(r["dyn001"] + r["crashes"] + r["leftover_processes"] + (r["findings_lost"] or 0) for r in results)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
