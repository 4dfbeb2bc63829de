"""The verify report: per-example measurements plus the cross-checked findings; text table and JSON form."""
from __future__ import annotations

import json
import os
import platform
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple

from dynlint.linter.finding import Finding
from dynlint.linter.version import __version__
from dynlint.runtime_check import timing
from dynlint.runtime_check.crosscheck import missed_predictions
from dynlint.runtime_check.results import ExampleResult

COLUMNS = ("example/function", "graphs", "breaks", "recompiles", "compile s", "eager ms", "compiled ms",
           "speedup", "agreement", "outcome")


@dataclass(frozen=True)
class VerifyReport:
    project_root: str
    device: str                             # "cpu" | "cuda" (as resolved from "auto")
    examples: Tuple[ExampleResult, ...]
    findings: Tuple[Finding, ...]           # static findings with status, plus DYN901/902/903
    wall_s: float = 0.0

    @property
    def torch_version(self) -> str:
        return next((r.torch_version for r in self.examples if r.torch_version), "")

    @property
    def triton_version(self) -> str:
        return next((r.triton_version for r in self.examples if r.triton_version), "")

    @property
    def missed(self) -> List[Finding]:
        """DYN901/DYN902: what Dynamo did that no static finding predicted."""
        return missed_predictions(self.findings)

    def to_dict(self) -> dict:
        return {
            "project_root": self.project_root,
            "device": self.device,
            "torch_version": self.torch_version,
            "triton_version": self.triton_version or None,
            "python_version": platform.python_version(),
            "wall_s": self.wall_s,
            "summary": {
                "examples": len(self.examples),
                "outcomes": dict(Counter(r.outcome for r in self.examples)),
                "status": dict(Counter(f.status for f in self.findings if f.status)),
                "codes": dict(Counter(f.code for f in self.findings if f.code.startswith("DYN9"))),
            },
            "examples": [r.to_dict() for r in self.examples],
            "findings": [f.to_dict() for f in self.findings],
        }

    def render_text(self) -> str:
        return render_table(self.examples) + "\n" + _summary(self)


def render_table(results: Tuple[ExampleResult, ...]) -> str:
    memory = any(r.eager_peak_mem_bytes is not None for r in results)      # CUDA runs
    columns = COLUMNS[:8] + (("peak MiB",) if memory else ()) + COLUMNS[8:]
    rows = [columns] + [row[:8] + ((_memory(r),) if memory else ()) + row[8:] for r, row in
                        ((r, _row(r)) for r in results)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(columns))]
    text = (0, len(columns) - 2, len(columns) - 1)
    lines = []
    for n, row in enumerate(rows):
        # Text columns left-aligned, numbers right-aligned.
        cells = [c.ljust(w) if i in text else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    notes = [f"  {r.name}: {_first_line(r.message)}" for r in results if r.outcome != "ok" and r.message]
    notes += [f"  {r.name}: output mismatch at {r.agreement.where}: {r.agreement.detail}"
              for r in results if r.agreement.status == "mismatch"]
    notes += [note for r in results for note in _timing_notes(r)]
    spans = max((len(r.timing_processes) for r in results), default=1)
    legend = ("speedup: eager time / compiled time, the ratio of the medians over rounds of both, with its 95% "
              "interval " + (f"spanning {spans} fresh worker processes" if spans > 1 else "within one worker process")
              + "; ~1x: no measurable difference (the interval holds 1)")
    timed = any(r.speedup_low is not None for r in results)
    return "\n".join(lines + ([legend] if timed else []) + (["", "notes:"] + notes if notes else [])) + "\n"


def speedup_text(speedup: Optional[float], low: Optional[float], high: Optional[float]) -> str:
    if speedup is None:
        return "-"
    if low is None or high is None:
        return f"{speedup:.2f}x"
    head = "~1x" if timing.verdict(low, high) == timing.SAME else f"{speedup:.2f}x"
    return f"{head} [{low:.2f}-{high:.2f}]"


def _memory(r: ExampleResult) -> str:
    if r.eager_peak_mem_bytes is None or r.compiled_peak_mem_bytes is None:
        return "-"
    return f"{r.eager_peak_mem_bytes / 2 ** 20:.0f} -> {r.compiled_peak_mem_bytes / 2 ** 20:.0f}"


def _timing_notes(r: ExampleResult) -> List[str]:
    """What the timing says beyond the table: the interval, launch-bound calls, the modes and which to use."""
    out = []
    if r.speedup_low is not None and not r.speedup_settled:
        out.append(f"  {r.name}: the speedup's interval stayed wider than ±{timing.TARGET:.0%} after {r.rounds} "
                   f"rounds: the time budget ran out first (--timing-budget SECONDS gives it longer)")
    processes = r.timing_processes
    if r.timing_note:
        out.append(f"  {r.name}: its interval spans {len(processes)} process{'es' if len(processes) > 1 else ''} "
                   f"({r.timing_note})")
    speedups = [p.speedup for p in processes]
    if len(speedups) > 1 and max(speedups) > (1 + timing.TARGET) * min(speedups):
        out.append(f"  {r.name}: the processes' speedups differ ({', '.join(f'{s:.2f}x' for s in speedups)}); the "
                   f"interval spans them")
    if r.launch_bound_varied:
        out.append(f"  {r.name}: launch-bound in {sum(bool(p.launch_bound) for p in processes)} of {len(processes)} "
                   f"timing processes, not in the others: it varied between processes")
    if r.training:
        out.append(f"  {r.name}: timed as training steps (forward, backward, optimizer step)")
    if r.grad_off and r.device.startswith("cuda") and r.speedup is not None:
        out.append(f"  {r.name}: runs with autograd off (no_grad or inference_mode): on a GPU, timing eager and "
                   f"compiled calls in turn has understated such speedups (README, \"How the speedup is measured\")")
    if r.launch_bound:
        hint = "" if any(m.mode == "reduce-overhead" for m in r.modes) else \
            "; CUDA graphs cut launch overhead: try --modes default,reduce-overhead"
        out.append(f"  {r.name}: launch-bound: {r.compiled_device_ms:.3f} ms of kernels in a "
                   f"{r.compiled_ms:.3f} ms compiled call{hint}")
    if r.one_call_speedup is not None:
        out.append(f"  {r.name}: one call at a time (synchronised after each): "
                   f"{speedup_text(r.one_call_speedup, r.one_call_low, r.one_call_high)}; the table's figure is "
                   f"a loop of calls back to back")
    if r.modes:
        parts = [f"default {speedup_text(r.speedup, r.speedup_low, r.speedup_high)}, compile {_num(r.compile_s, '{:.1f}')} s"
                 + _pays(r.break_even_calls)]
        for m in r.modes:
            if m.status != "measured":
                parts.append(f"{m.mode}: " + (m.note if m.status == "skipped" else f"{m.status} ({m.note})"))
                continue
            parts.append(f"{m.mode} {speedup_text(m.speedup, m.speedup_low, m.speedup_high)}, compile "
                         f"{_num(m.compile_s, '{:.1f}')} s" + _pays(m.break_even_calls) +
                         ("" if m.agreement == "match" else f", outputs {m.agreement}"))
        best = r.recommended_mode
        out.append(f"  {r.name}: modes: " + "; ".join(parts) + ". " +
                   (f"Recommended: {best} (the fastest whose outputs agree; a mode not measurably faster than "
                    f"default is not recommended over it)" if best else "No mode is measurably faster than eager."))
    return out


def _pays(calls: Optional[int]) -> str:
    return f", pays off after {calls:,} calls" if calls else ""


def _row(r: ExampleResult) -> Tuple[str, ...]:
    label = r.name if not r.function or r.function == r.name else f"{r.name} ({r.function})"
    reached_compile = r.phase in ("compiled", "compare", "timing", "done") or r.phase.startswith("mode ")
    agreement = {"match": "ok", "mismatch": "MISMATCH"}.get(r.agreement.status, "-")
    return (
        _clip(label, 48),
        str(len(r.graphs)) if reached_compile else "-",
        str(r.break_sites) if reached_compile else "-",
        (str(len(r.recompiles)) + ("!" if r.hit_recompile_limit else "")) if reached_compile else "-",
        _num(r.compile_s, "{:.2f}"),
        _num(r.eager_ms, "{:.3f}"),
        _num(r.compiled_ms, "{:.3f}"),
        speedup_text(r.speedup, r.speedup_low, r.speedup_high),
        agreement,
        r.outcome,
    )


def _summary(report: VerifyReport) -> str:
    outcomes = Counter(r.outcome for r in report.examples)
    status = Counter(f.status for f in report.findings if f.status and not f.code.startswith("DYN9"))
    codes = Counter(f.code for f in report.findings if f.code.startswith("DYN9"))
    versions = f"torch {report.torch_version}" + (f", triton {report.triton_version}" if report.triton_version else "")
    parts = [
        f"{len(report.examples)} examples on {report.device} ({versions}) in {report.wall_s:.1f} s: "
        + ", ".join(f"{n} {o}" for o, n in sorted(outcomes.items())),
        "static findings: " + (", ".join(f"{n} {s}" for s, n in sorted(status.items())) or "none"),
    ]
    if codes:
        parts.append("runtime findings: " + ", ".join(f"{n} {c}" for c, n in sorted(codes.items())))
    return "\n".join(parts) + "\n"


def _num(value: Optional[float], fmt: str) -> str:
    return "-" if value is None else fmt.format(value)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def write_missed_predictions(report: VerifyReport, path: os.PathLike) -> int:
    """Write the graph breaks and recompiles dynlint did not predict as JSON a user can attach to a bug
    report (environment, location, Dynamo's own words, the source lines). Returns how many were written."""
    root = Path(report.project_root)
    missed = []
    for f in report.missed:
        missed.append({**f.to_dict(), "source": _source_lines(root / f.path, f.line)})

    document = {
        "dynlint_version": __version__,
        "torch_version": report.torch_version,
        "triton_version": report.triton_version or None,
        "python_version": platform.python_version(),
        "platform": platform.platform(),
        "device": report.device,
        "missed": missed,
    }
    Path(path).write_text(json.dumps(document, indent=2, default=str) + "\n", encoding="utf-8")
    return len(missed)


def _source_lines(path: Path, line: int, context: int = 2) -> List[str]:
    """The reported line with `context` lines around it, each prefixed with its number."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    first, last = max(1, line - context), min(len(lines), line + context)
    return [f"{n:>5}{'>' if n == line else ' '} {lines[n - 1]}" for n in range(first, last + 1)]
