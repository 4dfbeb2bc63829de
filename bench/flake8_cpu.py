"""flake8's CPU time with the dynlint plugin installed, selected and not, beside flake8 without it, in one run.

    python bench/flake8_cpu.py            # prints a markdown table; --write puts it in docs/benchmarks.md

On the files of bench/speed.py's subset of the transformers tree (the tree is the project: the plugin's run
covers all of it, as it would for a user running flake8 on one folder of a repository). flake8 without dynlint
is a venv of its own holding that flake8 version alone (bench/speed.py's peers venv also holds TorchFix, itself
a flake8 plugin); with dynlint, this interpreter's. CPU time is
user + system of the whole process tree (flake8 and its worker processes), from the kernel's accounting of
waited-for children.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import speed  # noqa: E402

FLAKE8 = next(p for p in speed.PEERS if p.startswith("flake8=="))


def cpu_run(cmd, cwd):
    """(CPU seconds of the process tree, wall seconds) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode not in (0, 1):
        sys.stderr.write(f"{' '.join(map(str, cmd))} exited {r.returncode}:\n{r.stderr.decode()[-2000:]}\n")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true", help="update the section in docs/benchmarks.md")
    ap.add_argument("--subset", default="transformers/models/[a-b]*", help="glob of the folders flake8 is given")
    args = ap.parse_args()
    tree = speed.ensure_tree()
    alone_venv = speed.DATA / "flake8-alone"
    if not (alone_venv / "bin" / "flake8").exists():
        subprocess.run([sys.executable, "-m", "venv", str(alone_venv)], check=True)
        subprocess.run([str(alone_venv / "bin" / "pip"), "install", "-q", FLAKE8], check=True)
    rel = [str(p.relative_to(tree)) for p in sorted(tree.glob(args.subset))]
    files, lines = speed.count_lines([tree / r for r in rel])
    plain = [str(alone_venv / "bin" / "flake8"), "--exit-zero"]
    with_plugin = [sys.executable, "-m", "flake8", "--exit-zero"]
    cache = tree / ".dynlint_cache"
    rows = []

    def row(name, cmd, clear=False):
        if clear:
            shutil.rmtree(cache, ignore_errors=True)
        cpu, wall = cpu_run(cmd if cmd[-1] == "." else cmd + rel, tree)
        rows.append((name, cpu, wall))
        print(f"{name:<70} cpu {cpu:7.1f} s  wall {wall:6.1f} s", file=sys.stderr)
        return cpu

    base = row("flake8 without dynlint installed (its default selection)", plain)
    off = row("flake8 with dynlint installed, `--select E,F,W,C90` (flake8's default, no DYN code)",
              with_plugin + ["--select", "E,F,W,C90"], clear=True)
    ran = cache.exists()
    cold = row("flake8 with dynlint, default selection, cold cache", with_plugin, clear=True)
    warm = row("flake8 with dynlint, default selection, warm cache", with_plugin)
    only = row("flake8 with dynlint, `--select DYN`, warm cache", with_plugin + ["--select", "DYN"])
    alone = row("`dynlint check` on the whole project, cold (for scale)",
                [sys.executable, "-m", "dynlint", "check", "--exit-zero", "-q", "."], clear=True)

    from importlib.metadata import version
    head = (f"Measured {datetime.date.today()} on {platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}, flake8 {version('flake8')} (its default jobs: one worker per core); "
            f"flake8 given {files} files ({lines:,} lines, `{args.subset}`) of transformers {speed.TRANSFORMERS}, "
            f"whose whole tree is the dynlint project.")
    table = ["| run | CPU s (process tree) | wall s |", "|---|---:|---:|"]
    table += [f"| {name} | {cpu:.1f} | {wall:.1f} |" for name, cpu, wall in rows]
    notes = [
        f"- not selected: {off / base:.2f}× the CPU time of flake8 without dynlint "
        f"(the cache folder {'was' if ran else 'was not'} made: {'some' if ran else 'no'} dynlint work ran)",
        f"- selected, cold: {cold - base:.1f} s of CPU beyond flake8's own, against {alone:.1f} s for one "
        f"`dynlint check` of the project: the workers take turns, the first runs the project and the others "
        f"read its cache. The first worker runs dynlint in one process (flake8's workers are daemon processes, "
        f"which may not start workers of their own), so a cold run takes `-j1`'s time; before this, every worker "
        f"repeated the whole run, without a cache",
        f"- selected, warm: {warm - base:.1f} s beyond flake8's own; `--select DYN` alone {only:.1f} s",
    ]
    report = "\n".join([head, "", *table, "", *notes]) + "\n"
    print(report)
    if args.write:
        speed.write_section("flake8", "The flake8 plugin's CPU time (`bench/flake8_cpu.py`)", report)


if __name__ == "__main__":
    main()
