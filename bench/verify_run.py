"""Run `run_verify` on a project and print the table (and optionally write the JSON report).

    python bench/verify_run.py tests/verify_fixtures/project --device cuda --json /tmp/report.json
"""
import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dynlint.runtime_check import run_verify, write_missed_predictions  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("project", type=Path)
    parser.add_argument("--glob", action="append", default=None)
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--passes", nargs="*", default=())
    parser.add_argument("--json", type=Path)
    parser.add_argument("--missed", type=Path)
    args = parser.parse_args()
    start = time.perf_counter()
    report = run_verify(args.project, args.glob or ["**/dynlint_examples.py"], device=args.device,
                        timeout=args.timeout, jobs=args.jobs, passes=args.passes)
    print(report.render_text())
    for f in report.findings:
        print(f"{f.path}:{f.line}: {f.code} [{f.status}] {f.message[:140]}")
    if args.json:
        args.json.write_text(json.dumps(report.to_dict(), indent=1) + "\n")
    if args.missed:
        write_missed_predictions(report, args.missed)
    print(f"total {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
