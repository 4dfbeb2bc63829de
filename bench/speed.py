"""Speed and memory of the static pass, side by side with its peers in one run.

    python bench/speed.py                # prints a markdown report; --write updates docs/benchmarks.md

Fetches (once, into bench/.data/, git-ignored) the transformers 5.4.0 source tree (`pip download --no-deps`)
and a virtual environment with the peers (TorchFix, flake8, ruff), then measures, in this order and on this
machine: dynlint cold / warm / after editing one file on the whole tree, ruff on the whole tree, a
pre-commit-sized run (10 files, interpreter start included), and dynlint against TorchFix, flake8 and ruff on
the same subset of files (TorchFix and flake8 are too slow for the whole tree in one sitting). Wall time and
peak memory (summed over the process tree, sampled every 20 ms) come from the child processes themselves.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
import statistics
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data"
ROOT = HERE.parent
TRANSFORMERS = "5.4.0"
PEERS = ["torchfix==0.7.0", "flake8==7.5.0", "ruff==0.17.6"]


def ensure_tree() -> Path:
    tree = DATA / f"transformers-{TRANSFORMERS}"
    if not (tree / "transformers").is_dir():
        DATA.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(DATA),
                        f"transformers=={TRANSFORMERS}"], check=True)
        wheel = next(DATA.glob(f"transformers-{TRANSFORMERS}-*.whl"))
        with zipfile.ZipFile(wheel) as z:
            z.extractall(tree, [n for n in z.namelist() if n.startswith("transformers/") and n.endswith(".py")])
        (tree / "pyproject.toml").write_text("[tool.dynlint]\n")     # the tree is its own project
    return tree


def ensure_peers() -> Path:
    venv = DATA / "peers"
    if not (venv / "bin" / "torchfix").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", *PEERS], check=True)
    return venv / "bin"


def _tree_rss(pid: int) -> int:
    """Resident memory (bytes) of a process and all its descendants."""
    children = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(d))
            except (OSError, ValueError, IndexError):
                pass
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        stack += children.get(p, [])
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError):
            pass
    return total


def measure(cmd, cwd=None):
    """(wall seconds, peak tree RSS bytes, return code) of one command."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = [0]

    def sample():
        while proc.poll() is None:
            peak[0] = max(peak[0], _tree_rss(proc.pid))
            time.sleep(0.02)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - start
    t.join()
    if proc.returncode not in (0, 1):
        sys.stderr.write(f"{' '.join(map(str, cmd))} exited {proc.returncode}:\n{err.decode()[-2000:]}\n")
    return wall, peak[0], proc.returncode


def count_lines(paths):
    n = files = 0
    for p in paths:
        for f in ([p] if p.is_file() else sorted(p.rglob("*.py"))):
            files += 1
            n += f.read_bytes().count(b"\n")
    return files, n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true", help="update the section in docs/benchmarks.md")
    ap.add_argument("--subset", default="transformers/models/[a-b]*", help="glob for the TorchFix comparison")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each quick dynlint row (the median is shown)")
    args = ap.parse_args()
    tree = ensure_tree()
    peers = ensure_peers()
    dyn = [sys.executable, "-m", "dynlint", "check", "--exit-zero", "-q"]
    full = tree / "transformers"
    files, lines = count_lines([full])
    cache = tree / ".dynlint_cache"
    rows = []

    def row(name, cmd, n_lines, cwd=tree, repeat=1, before=lambda i: None):
        """Median wall time of `repeat` runs (`before(i)` prepares run i), the largest peak memory."""
        walls, peak = [], 0
        for i in range(repeat):
            before(i)
            wall, rss, _ = measure(cmd, cwd)
            walls.append(wall)
            peak = max(peak, rss)
        wall = statistics.median(walls)
        rows.append((name, wall, peak, n_lines, walls))
        print(f"{name:<58} {wall:8.2f} s {peak / 2**20:8.0f} MiB  {walls}", file=sys.stderr)
        return wall

    def clear_cache(i):
        shutil.rmtree(cache, ignore_errors=True)

    cold = row("dynlint, full tree, cold (no cache)", dyn + ["transformers"], lines, repeat=args.repeat,
               before=clear_cache)
    warm = row("dynlint, full tree, warm (nothing changed)", dyn + ["transformers"], lines, repeat=args.repeat)
    edited = full / "models" / "llama" / "modeling_llama.py"
    original = edited.read_bytes()
    try:
        one = row("dynlint, full tree, one file edited (a comment line added)", dyn + ["transformers"], lines,
                  repeat=args.repeat, before=lambda i: edited.write_bytes(original + f"\n# edit {i}\n".encode()))
        moved = row("dynlint, full tree, one file edited (lines inserted above a class)", dyn + ["transformers"],
                    lines, repeat=args.repeat, before=lambda i: edited.write_bytes(original.replace(
                        b"\nclass LlamaModel(", b"\n" * (i + 1) + b"\nclass LlamaModel(", 1)))
        body = row("dynlint, full tree, one file edited (a call added to a function)", dyn + ["transformers"], lines,
                   repeat=args.repeat, before=lambda i: edited.write_bytes(original.replace(
                       b"hidden_states = self.norm(hidden_states)", b"hidden_states = self.norm(hidden_states)" + b".clone()" * (i + 1), 1)))
    finally:
        edited.write_bytes(original)
    # the language server on the warm cache: keystroke (a one-file edit) to new diagnostics
    import asyncio
    sys.path.insert(0, str(HERE))
    import server_latency
    lsp = asyncio.run(server_latency.measure(tree, str(edited.relative_to(tree)), max(args.repeat, 5)))
    row("dynlint, full tree, cold, -j1", dyn + ["-j1", "--no-cache", "transformers"], lines)
    ten = sorted(full.glob("models/*/modeling_*.py"))[:10]
    _, ten_lines = count_lines(ten)
    pc = row("dynlint, 10 files (pre-commit size), cold, interpreter start", dyn + ["--no-cache", *map(str, ten)],
             ten_lines, repeat=args.repeat)
    row("ruff check, full tree", [str(peers / "ruff"), "check", "--no-cache", "--exit-zero", "-q", "transformers"],
        lines)
    subset = sorted(tree.glob(args.subset))
    sub_files, sub_lines = count_lines(subset)
    rel = [str(p.relative_to(tree)) for p in subset]
    dyn_sub = row(f"dynlint, subset ({sub_files} files), cold", dyn + ["--no-cache", *rel], sub_lines)
    tfx = row(f"TorchFix, subset ({sub_files} files)", [str(peers / "torchfix"), *rel], sub_lines)
    row(f"flake8, subset ({sub_files} files)", [str(peers / "flake8"), "--exit-zero", *rel], sub_lines)
    row(f"ruff, subset ({sub_files} files)", [str(peers / "ruff"), "check", "--no-cache", "--exit-zero", "-q", *rel],
        sub_lines)

    from importlib.metadata import version

    from dynlint import __version__
    head = (f"Measured {datetime.date.today()} on {platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}, dynlint {__version__}, libcst {version('libcst')}; "
            f"transformers {TRANSFORMERS}: {files} files, {lines:,} lines. Peers: {', '.join(PEERS)} (TorchFix in "
            f"its own venv with its pinned libcst). All runs use every core unless -j1 says otherwise.")
    table = ["| run | wall s (median) | runs | lines/s | peak memory MiB |", "|---|---:|---|---:|---:|"]
    for name, wall, rss, n, walls in rows:
        table.append(f"| {name} | {wall:.2f} | {' / '.join(f'{w:.2f}' for w in walls)} | {n / wall:,.0f} | "
                     f"{rss / 2**20:.0f} |")
    ratios = [
        f"- TorchFix / dynlint cold on the same {sub_files} files: **{tfx / dyn_sub:.1f}×** (target ≥ 10×)",
        f"- full tree: cold {cold:.1f} s (target ≤ 30 s), warm {warm:.2f} s (≤ 2 s), one file edited {one:.2f} s "
        f"(a comment) / {moved:.2f} s (lines inserted) / {body:.2f} s (a call added, so the project's call graph changes) (≤ 1 s), pre-commit-sized {pc:.2f} s (≤ 1 s)",
        f"- language server (`bench/server_latency.py`), warm: keystroke to new diagnostics for a one-file edit "
        f"{lsp['median']:.2f} s median over {len(lsp['edits'])} edits, the {server_latency.DEBOUNCE_NOTE} "
        f"(target < 0.5 s); first diagnostics after opening the file {lsp['open']:.2f} s",
        f"- peak memory on the full tree, cold: {max(r[2] for r in rows[:1]) / 2**20:.0f} MiB (target ≤ 1024)",
    ]
    report = "\n".join([head, "", *table, "", *ratios]) + "\n"
    print(report)
    if args.write:
        write_section("speed", "Static pass speed (`bench/speed.py`)", report)


def write_section(marker: str, title: str, report: str) -> None:
    """Put `report` between the `marker` comments of docs/benchmarks.md (a new section titled `title` the
    first time)."""
    doc = ROOT / "docs" / "benchmarks.md"
    text = doc.read_text() if doc.exists() else "# Benchmarks\n"
    start, end = f"<!-- {marker}:start -->", f"<!-- {marker}:end -->"
    block = f"{start}\n{report}{end}"
    if start in text:
        text = text.split(start)[0] + block + text.split(end, 1)[1]
    else:
        text += f"\n## {title}\n\n" + block + "\n"
    doc.write_text(text)


if __name__ == "__main__":
    main()
