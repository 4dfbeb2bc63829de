"""What a hostile repository's pathological inputs cost, at 1x, 2x and 4x their size: CPU seconds and peak memory
of `dynlint check FILE --no-cache -j 1`, each in its own process. Linear cost doubles with the size.

    python bench/hostile_cost.py               # prints a markdown table
    python bench/hostile_cost.py --base 500    # smaller sizes (quicker)

The inputs are those of the hostile-repository issue (tests/hostile/test_cost.py holds each as a work-bounded
test): many `.item()` lines in one compiled function (the fix planning and the frame pass once walked the whole
function per finding), a call chain of n functions (each unit re-read the whole file), and a chain of
conditional expressions n deep (libcst's parser is superlinear in depth: refused past the index's limit).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def many_items(n: int) -> str:
    body = "\n".join(f"    a{i} = x.item()" for i in range(n))
    return f"import torch\n\n\n@torch.compile\ndef f(x):\n{body}\n    return x\n"


def call_chain(n: int) -> str:
    lines = ["import torch", "", "@torch.compile", "def root(x):", "    return f0(x)", ""]
    for i in range(n):
        lines += [f"def f{i}(x):", f"    return f{i + 1}(x)" if i < n - 1 else "    return x.item()"]
    return "\n".join(lines) + "\n"


def conditional_chain(n: int) -> str:
    return "import torch\n\n@torch.compile\ndef f(x, c):\n    return " + " if c else ".join(["x"] * n) + "\n"


INPUTS = {"`.item()` lines in one function": (many_items, 1000), "functions in one call chain": (call_chain, 1000),
          "levels of conditional expressions": (conditional_chain, 1500)}


def measure(source: str) -> tuple:
    """(CPU seconds, peak MiB) of one cold check of `source` as a one-file project, in a child process."""
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "pyproject.toml").write_text("[tool.dynlint]\n")
        (Path(d) / "m.py").write_text(source)
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        child = subprocess.Popen([sys.executable, "-m", "dynlint", "check", "m.py", "--no-cache", "-q", "-j", "1"],
                                 cwd=d, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, _, usage = os.wait4(child.pid, 0)          # this child's own figures, not the sum of all children's
        child.returncode = 0
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", type=int, help="the 1x size of every input (default: each input's own)")
    args = ap.parse_args()
    print("| input | 1x | 2x | 4x | CPU 2x/1x | CPU 4x/2x |\n|---|---:|---:|---:|---:|---:|")
    for what, (make, base) in INPUTS.items():
        base = args.base or base
        runs = [measure(make(base * k)) for k in (1, 2, 4)]
        cells = [f"{base * k:,}: {cpu:.1f} s, {mib:.0f} MiB" for k, (cpu, mib) in zip((1, 2, 4), runs)]
        ratios = [runs[1][0] / max(runs[0][0], 1e-9), runs[2][0] / max(runs[1][0], 1e-9)]
        print(f"| {what} | " + " | ".join(cells) + f" | {ratios[0]:.2f} | {ratios[1]:.2f} |")


if __name__ == "__main__":
    main()
