"""`--verify` with examples that exhaust GPU memory: recorded, static results kept, the GPU given back. (GPU)

    python bench/gpu_hostile.py [--json OUT]

Builds a small project whose examples fill every GPU's memory until CUDA runs out (and hold it), then one that
allocates nearly all of it at once, followed by ordinary examples; runs `dynlint check --verify --device cuda`
on it and prints each example's outcome, the static findings, and what `nvidia-smi` shows afterwards (compute
processes left, memory in use).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

MODEL = '''import torch


@torch.compile
def f(x):
    return x.item()


def g(x):
    return torch.nn.functional.gelu(x) * 2
'''

EXAMPLES = '''import torch

import dynlint
from model import g


@dynlint.example
def fills_gpu_memory(device="cuda"):
    held = []
    while True:                                     # 8 GiB at a time until CUDA runs out
        held.append(torch.empty(2 ** 31, dtype=torch.float32, device=device))


@dynlint.example
def fine_after_the_oom(device="cuda"):
    return g, [(torch.randn(4096, 4096, device=device),)]


@dynlint.example
def one_huge_allocation(device="cuda"):
    total = torch.cuda.get_device_properties(device).total_memory
    x = torch.empty(total // 4, dtype=torch.float32, device=device)        # all of it: more than is free
    return g, [(x,)]


@dynlint.example
def fine_at_the_end(device="cuda"):
    return g, [(torch.randn(1024, device=device),)]
'''


def smi(query: str) -> str:
    return subprocess.run(["nvidia-smi", f"--query-{query}", "--format=csv,noheader"], capture_output=True,
                          text=True).stdout.strip()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="dynlint-gpu-hostile-") as tmp:
        root = Path(tmp)
        (root / "pyproject.toml").write_text("[tool.dynlint]\n[tool.dynlint.verify]\ntimeout = 300\n")
        (root / "model.py").write_text(MODEL)
        (root / "dynlint_examples.py").write_text(EXAMPLES)
        proc = subprocess.run([sys.executable, "-m", "dynlint", "check", ".", "--verify", "--device", "cuda",
                               "--no-cache", "--quiet", "--format", "json", "--output", "out.json"],
                              cwd=root, capture_output=True, text=True, env=dict(os.environ, NO_COLOR="1"))
        doc = json.loads((root / "out.json").read_text())
    result = {
        "exit": proc.returncode,
        "traceback_in_stderr": "Traceback" in proc.stderr,
        "static_findings": [(f["path"], f["line"], f["code"]) for f in doc["findings"] if not f["code"].startswith("DYN9")],
        "examples": [{"name": e["name"], "slot": e["slot"], "outcome": e["outcome"], "message": e["message"][:300]}
                     for e in doc["verify"]["examples"]],
        "compute_processes_after": smi("compute-apps=pid,process_name,used_memory"),
        "gpu_memory_used_after": smi("gpu=index,memory.used"),
    }
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
