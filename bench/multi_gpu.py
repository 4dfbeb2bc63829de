"""`--verify` on one GPU and on every visible GPU: same results, less wall time? (needs ≥ 2 GPUs)

    python bench/multi_gpu.py [--project examples] [--copies 2] [--json OUT] [--markdown OUT]

In one run: `dynlint check <project> --verify --device cuda` first with CUDA_VISIBLE_DEVICES set to the first
GPU only, then with every GPU visible (one worker per GPU). `--copies N` checks N copies of the project side
by side (one folder), so that there are enough examples to keep every GPU busy. While each run goes,
`nvidia-smi` samples every GPU's utilisation and memory, which shows which GPUs worked. The two JSON reports
are then compared with everything that is a measurement taken out (times, speedups, peak memory, output
differences' size, the slot and device an example ran on): what is left must be identical.
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
MEASURED = {"wall_s", "compile_s", "eager_ms", "compiled_ms", "speedup", "eager_peak_mem_bytes",
            "compiled_peak_mem_bytes", "max_abs_diff", "slot", "device", "project_root"}


def comparable(value):
    """The report without what is measured or where it ran."""
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items() if k not in MEASURED}
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return value


def gpu_ids() -> list:
    out = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], capture_output=True,
                         text=True, check=True).stdout
    return [line.strip() for line in out.splitlines() if line.strip()]


def run(project: Path, visible: str, out: Path) -> dict:
    """One verify run, with nvidia-smi sampling every GPU's utilisation meanwhile."""
    samples = out.with_suffix(".smi.csv")
    with open(samples, "w") as f:
        smi = subprocess.Popen(["nvidia-smi", "--query-gpu=index,utilization.gpu,memory.used",
                                "--format=csv,noheader,nounits", "-lms", "200"], stdout=f)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "dynlint", "check", ".", "--verify", "--device", "cuda",
                           "--no-cache", "--quiet", "--format", "json", "--output", str(out)],
                          cwd=project, env=dict(os.environ, CUDA_VISIBLE_DEVICES=visible, NO_COLOR="1"),
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    smi.terminate()
    smi.wait()
    if proc.returncode not in (0, 1):
        sys.exit(f"dynlint exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    busy: dict = {}
    for line in samples.read_text().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3 and parts[1].isdigit():
            gpu = busy.setdefault(parts[0], {"samples": 0, "busy_samples": 0, "max_util": 0, "max_mem_mib": 0})
            gpu["samples"] += 1
            gpu["busy_samples"] += int(parts[1]) > 0
            gpu["max_util"] = max(gpu["max_util"], int(parts[1]))
            gpu["max_mem_mib"] = max(gpu["max_mem_mib"], int(parts[2]))
    doc = json.loads(out.read_text())
    slots: dict = {}
    for e in doc["verify"]["examples"]:
        slots.setdefault(e["slot"], []).append(e["name"])
    return {"visible": visible, "wall_s": round(wall, 1), "verify_wall_s": round(doc["verify"]["wall_s"], 1),
            "gpus_sampled": busy, "examples_by_slot": slots, "doc": doc}


def copy_project(src: Path, dst: Path, copies: int) -> None:
    """N copies of the project as packages of one project: the same examples, N times."""
    (dst / "pyproject.toml").write_text('[tool.dynlint]\nregions = "auto"\n\n[tool.dynlint.verify]\n'
                                        'examples = ["copy*/**/dynlint_examples.py"]\ntimeout = 300\n')
    for i in range(copies):
        shutil.copytree(src, dst / f"copy{i}", ignore=shutil.ignore_patterns("__pycache__", ".dynlint_cache",
                                                                            "pyproject.toml"))


def markdown(one: dict, all_: dict, identical: bool, diffs: list, n_examples: int) -> str:
    def gpus(r):
        return ", ".join(f"GPU {g}: busy in {v['busy_samples']}/{v['samples']} samples, peak {v['max_util']}%, "
                         f"{v['max_mem_mib']:,} MiB" for g, v in sorted(r["gpus_sampled"].items()))

    def slots(r):
        return ", ".join(f"`{s}` {len(names)}" for s, names in sorted(r["examples_by_slot"].items()))

    ratio = one["wall_s"] / all_["wall_s"]
    v = all_["doc"]["verify"]
    lines = [
        "| run | examples | wall s | examples per worker (CUDA_VISIBLE_DEVICES of the worker) | GPUs seen by nvidia-smi |",
        "|---|---:|---:|---|---|",
        f"| one GPU (`CUDA_VISIBLE_DEVICES={one['visible']}`) | {n_examples} | {one['wall_s']} | {slots(one)} | "
        f"{gpus(one)} |",
        f"| all GPUs (`CUDA_VISIBLE_DEVICES={all_['visible']}`) | {n_examples} | {all_['wall_s']} | {slots(all_)} | "
        f"{gpus(all_)} |",
        "",
        f"Wall-time ratio one GPU / all GPUs: **{ratio:.2f}×** (torch {v['torch_version']}, triton "
        f"{v['triton_version']}, Python {v['python_version']}).",
        "",
        "Results apart from measurements (times, speedups, peak memory, the size of output differences, the "
        "slot an example ran on): " + ("**identical** (outcomes, graphs and their ops and source lines, breaks "
                                       "with file:line and gb_type, recompiles with reasons, output agreement, "
                                       "executed lines, every finding and its confirmed / not observed / "
                                       "unverified status)." if identical else
                                       "**different**:\n\n" + "\n".join(f"- {d}" for d in diffs[:20])),
    ]
    return "\n".join(lines) + "\n"


def differences(a, b, where="") -> list:
    if type(a) is not type(b):
        return [f"{where}: {a!r} != {b!r}"]
    if isinstance(a, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            out += differences(a.get(k), b.get(k), f"{where}.{k}")
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{where}: {len(a)} items != {len(b)} items"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: {a!r} != {b!r}"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--project", type=Path, default=ROOT / "examples")
    ap.add_argument("--copies", type=int, default=2, help="copies of the project checked together (default 2)")
    ap.add_argument("--json", type=Path, help="write both reports and the comparison here")
    ap.add_argument("--markdown", type=Path, help="write the table here")
    args = ap.parse_args()
    ids = gpu_ids()
    if len(ids) < 2:
        sys.exit(f"needs at least 2 GPUs, nvidia-smi shows {len(ids)}")
    with tempfile.TemporaryDirectory(prefix="dynlint-multi-gpu-") as tmp:
        project = Path(tmp, "project")
        project.mkdir()
        copy_project(args.project.resolve(), project, args.copies)
        one = run(project, ids[0], Path(tmp, "one.json"))
        all_ = run(project, ",".join(ids), Path(tmp, "all.json"))
    # the examples' order in the report is the discovery order: compare them as they come
    a, b = comparable(one["doc"]), comparable(all_["doc"])
    diffs = differences(a, b)
    n = len(one["doc"]["verify"]["examples"])
    text = markdown(one, all_, not diffs, diffs, n)
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    if args.json:
        args.json.write_text(json.dumps({"one_gpu": one, "all_gpus": all_, "differences": diffs}, indent=1))
    return 0 if not diffs else 1


if __name__ == "__main__":
    sys.exit(main())
