"""Does dynlint's reported speedup agree with a standalone torch.compile measurement? (GPU)

    python bench/speedup_agreement.py [--device cuda] [--json OUT]

In one run: `dynlint check examples/ --verify` measures the pointwise-heavy `pointwise_gelu` example
through dynlint's worker (its own Dynamo backend over Inductor, CUDA events); then this script times the
same function and inputs with plain `torch.compile` (default Inductor backend) and CUDA events, with the
same method: warm-up, then the median of repeated timed calls. Agreement target: within 10%.
"""
import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def standalone(device: str, repeats: int = 50):
    import torch

    sys.path.insert(0, str(EXAMPLES))
    from dynlint_examples import pointwise_gelu

    fn, calls = pointwise_gelu(device=device)
    args = calls[0]
    compiled = torch.compile(fn)

    def time_ms(f):
        for _ in range(5):
            f(*args)
        torch.cuda.synchronize()
        times = []
        for _ in range(repeats):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            f(*args)
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
        return statistics.median(times)

    eager = time_ms(fn)
    comp = time_ms(compiled)
    return eager, comp


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--report", type=Path, help="reuse the JSON of a `dynlint check examples/ --verify` run")
    args = ap.parse_args()
    if args.report:
        doc = json.loads(args.report.read_text())
    else:
        out = subprocess.run([sys.executable, "-m", "dynlint", "check", str(EXAMPLES), "--verify", "--device",
                              args.device, "--format", "json", "--exit-zero", "--no-cache"],
                             capture_output=True, text=True, cwd=ROOT)
        doc = json.loads(out.stdout)
    ex = next(e for e in doc["verify"]["examples"] if e["name"] == "pointwise_gelu")
    eager, comp = standalone(args.device)
    ours, theirs = ex["speedup"], eager / comp
    diff = abs(ours - theirs) / theirs
    result = {
        "device": ex["device"], "torch": ex["torch_version"], "triton": ex["triton_version"],
        "dynlint": {"eager_ms": ex["eager_ms"], "compiled_ms": ex["compiled_ms"], "speedup": ours,
                    "kernels": ex["kernels"]},
        "standalone": {"eager_ms": eager, "compiled_ms": comp, "speedup": theirs},
        "relative_difference": diff, "within_10_percent": diff <= 0.10,
        "table": doc["verify"],
    }
    print(f"pointwise_gelu on {ex['device']}: dynlint {ours:.2f}x ({ex['eager_ms']:.3f} -> {ex['compiled_ms']:.3f} ms), "
          f"standalone torch.compile {theirs:.2f}x ({eager:.3f} -> {comp:.3f} ms): difference {diff:.1%}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0 if diff <= 0.10 else 1


if __name__ == "__main__":
    sys.exit(main())
