"""`run_verify`: find the examples, run each in its own worker process, cross-check the static findings.

The parent process never imports torch (nor the user's code): it reads the example files with `ast`,
asks a short-lived probe process about CUDA when it needs to, and talks to workers through JSON files.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence, Tuple

import dynlint
from dynlint.linter.config import DEVICES, Config
from dynlint.linter.finding import Finding
from dynlint.runtime_check.crosscheck import cross_check
from dynlint.runtime_check.discover import DEFAULT_GLOBS, ExampleSpec, discover
from dynlint.runtime_check.process import ProcessOutcome, kill_running, run_isolated
from dynlint.runtime_check.report import VerifyReport
from dynlint.runtime_check.results import ExampleResult, ModeResult
from dynlint.runtime_check.schedule import Slot, plan_slots, run_on_slots

INSTALL_HINT = "pip install 'dynlint[verify]'"
_LOG_LINES_IN_MESSAGE = 15


class VerifyUnavailable(RuntimeError):
    """--verify cannot run here: torch is missing or broken, or the requested device does not exist."""


def run_verify(project_root: Path, example_globs: Sequence[str] = DEFAULT_GLOBS, device: str = "auto",
               timeout: float = 120, static_findings: Iterable[Finding] = (), *, jobs: Optional[int] = None,
               passes: Sequence[str] = (), time_budget_s: float = 1.0, modes: Sequence[str] = ("default",),
               timing_processes: int = Config.timing_processes,
               python: str = sys.executable, progress: Optional[Callable[[str, int, int], None]] = None,
               save_outputs: Optional[Path] = None, reference_outputs: Optional[Path] = None,
               cluster: str = "local") -> VerifyReport:
    """Compile every `@dynlint.example` under project_root and cross-check `static_findings` against it.

    device: "auto" (CUDA when a GPU is visible), "cpu" or "cuda". With several GPUs one worker runs per
    GPU at a time; on CPU `jobs` workers (default 1, so that timings are not disturbed).
    timeout: seconds per example (an example's own @dynlint.example(timeout=...) wins).
    passes: graph passes for dynlint's backend, by name (see dynlint.compiler.PASSES); none by default.
    time_budget_s: about how long the timing of one mode (rounds of eager and compiled calls) may take before
    its interval is narrow enough (runtime_check/timing.py).
    modes: `torch.compile` modes measured, "default" first (graphs, breaks and recompiles are the default's).
    timing_processes: fresh worker processes the default mode is timed in, each within `time_budget_s`; the
    interval spans them (timing.across_processes). 1: the first worker's own interval alone.
    progress: optional `progress(example name, examples done, examples)`, called as each example starts
    and ends (dynlint.report.progress draws it).
    save_outputs: a folder where each example's eager outputs are kept (pickled by torch.save);
    reference_outputs: such a folder from an earlier run, whose outputs this run's are compared with
    (ExampleResult.against_original). `dynlint check --fix --verify` runs the original code with the first, the
    fixed code with the second.
    cluster: "local" (this host), or "ray" / "ray://HOST:PORT": each example a task of that Ray cluster
    (runtime_check/cluster.py); torch is then needed on its nodes, not here.
    Raises VerifyUnavailable when torch cannot be imported or the device is not there (or the cluster cannot be
    used).
    """
    if device not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(DEVICES)}, not {device!r}")
    start = time.perf_counter()
    root = Path(project_root).resolve()
    specs = discover(root, list(example_globs) or DEFAULT_GLOBS)
    if cluster != "local":
        options = {"timeout": timeout, "passes": list(passes), "time_budget_s": time_budget_s, "modes": list(modes),
                   "timing_processes": timing_processes}
        for key, folder in (("save_outputs", save_outputs), ("reference_outputs", reference_outputs)):
            if folder:
                options[key] = [str(Path(folder) / outputs_file(spec)) for spec in specs]
        resolved, results = _on_cluster(specs, root, cluster, device, options, progress)
        return VerifyReport(project_root=str(root), device=resolved, examples=tuple(results),
                            findings=tuple(cross_check(list(static_findings), results)),
                            wall_s=time.perf_counter() - start)
    resolved, cuda_count = resolve_device(device, python)
    slots = plan_slots(resolved, cuda_count, jobs, os.environ.get("CUDA_VISIBLE_DEVICES"), os.cpu_count() or 1)
    with tempfile.TemporaryDirectory(prefix="dynlint-verify-") as tmp:
        finished: list = []              # list.append is atomic: slots run in threads

        def run_one(item: Tuple[int, ExampleSpec], slot: Slot) -> ExampleResult:
            index, spec = item
            if progress:
                progress(spec.name, len(finished), len(specs))
            outputs = {"save_outputs": save_outputs, "reference_outputs": reference_outputs}
            result = run_example(spec, slot, root, Path(tmp) / str(index), timeout=spec.timeout or timeout,
                                 passes=passes, time_budget_s=time_budget_s, modes=modes, python=python,
                                 timing_processes=timing_processes,
                                 **{k: str(Path(v) / outputs_file(spec)) for k, v in outputs.items() if v})
            finished.append(spec.name)
            if progress:
                progress(spec.name, len(finished), len(specs))
            return result

        results = run_on_slots(list(enumerate(specs)), slots, run_one, on_interrupt=kill_running)
    findings = cross_check(list(static_findings), results)
    return VerifyReport(project_root=str(root), device=resolved, examples=tuple(results),
                        findings=tuple(findings), wall_s=time.perf_counter() - start)


def _on_cluster(specs, root, cluster, device, options, progress):
    from dynlint.runtime_check import cluster as ray_cluster     # only with --cluster: Ray loads on first use

    try:
        return ray_cluster.run_on_ray(specs, root, cluster, device, options, progress)
    except ray_cluster.ClusterUnavailable as e:
        raise VerifyUnavailable(str(e)) from None


def resolve_device(device: str, python: str = sys.executable) -> Tuple[str, int]:
    """("cpu" | "cuda", number of visible GPUs). Torch is probed in a child process, never imported here."""
    if importlib.util.find_spec("torch") is None:
        raise VerifyUnavailable(f"--verify needs PyTorch, which is not installed: {INSTALL_HINT}")
    # Probed even for "cpu": a broken install should stop the run once, not fail every example.
    probe = ("import json, torch; print(json.dumps({'torch': torch.__version__, "
             "'cuda': torch.cuda.device_count() if torch.cuda.is_available() else 0}))")
    try:
        done = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=300)
    except (subprocess.TimeoutExpired, OSError) as e:
        raise VerifyUnavailable(f"--verify could not start torch ({INSTALL_HINT}): {e}") from e
    try:
        info = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise VerifyUnavailable(f"--verify cannot import torch ({INSTALL_HINT}):\n{_tail(done.stderr)}") from None
    if device == "cpu":
        return "cpu", 0
    if device == "cuda" and info["cuda"] < 1:
        raise VerifyUnavailable(f"--device cuda: torch {info['torch']} sees no CUDA device")
    return ("cuda", info["cuda"]) if info["cuda"] > 0 else ("cpu", 0)


def outputs_file(spec: ExampleSpec) -> str:
    return hashlib.blake2b(spec.key.encode(), digest_size=8).hexdigest() + ".pt"


def run_example(spec: ExampleSpec, slot: Slot, root: Path, work: Path, *, timeout: float,
                passes: Sequence[str] = (), time_budget_s: float = 1.0, modes: Sequence[str] = ("default",),
                timing_processes: int = Config.timing_processes, python: str = sys.executable, save_outputs: str = "",
                reference_outputs: str = "") -> ExampleResult:
    """Run one example in a fresh worker process and turn whatever happened into an ExampleResult; then, once it
    has timed the example, `timing_processes - 1` fresh workers that only time it, each with its own timeout
    (one that times out or fails leaves the others' figures, with a note); then each mode after "default" in a
    worker of its own, with its own timeout, into `modes` (a mode that times out or fails leaves the default's
    figures and the other modes as they are)."""
    base = ExampleResult(name=spec.name, path=spec.path, line=spec.line, factory=spec.factory, outcome="error",
                         slot=slot.label)
    if spec.error:
        return base.with_(message=spec.error, modes=tuple(ModeResult(m, "skipped", "the example cannot be run")
                                                          for m in modes[1:]))
    request = {"project_root": str(root), "path": spec.path, "factory": spec.factory, "name": spec.name,
               "line": spec.line, "device": slot.device, "slot": slot.label, "passes": list(passes),
               "time_budget_s": time_budget_s, "save_outputs": save_outputs, "reference_outputs": reference_outputs}

    def run(work: Path, **extra) -> ExampleResult:
        work.mkdir(parents=True, exist_ok=True)
        (work / "request.json").write_text(json.dumps({**request, **extra}), encoding="utf-8")
        result_path = work / "result.json"
        cmd = [python, "-m", "dynlint.runtime_check.worker", str(work / "request.json"), str(result_path), spec.key]
        outcome = run_isolated(cmd, env=_worker_env(slot), timeout=timeout, log_path=str(work / "output.log"),
                               cwd=str(root))
        return interpret(base, outcome, _read_result(result_path))

    result = run(work)
    if result.outcome == "ok" and result.timing_processes:
        result = more_timing(result, [run(work / f"timing{n}", timing_only=True, save_outputs="", reference_outputs="")
                                      for n in range(2, timing_processes + 1)])
    measured = []
    for i, mode in enumerate(modes[1:], 1):
        skip = mode_skipped(mode, slot.device, result)
        measured.append(ModeResult(mode, "skipped", skip) if skip else
                        mode_result(mode, run(work / f"mode{i}", mode=mode, save_outputs="", reference_outputs="")))
    return result.with_(modes=tuple(measured))


def more_timing(result: ExampleResult, runs: Sequence[ExampleResult]) -> ExampleResult:
    """The first worker's result with the timing of the further processes that finished; a note for each that
    did not."""
    done, notes = [], []
    for n, run in enumerate(runs, 2):
        if run.outcome == "ok" and run.timing_processes:
            done.append(run.timing_processes[0])
        else:
            notes.append(f"timing process {n}: {(run.message.strip().splitlines() or [run.outcome])[0]}")
    return result.across_processes(done, "; ".join(notes))


def mode_skipped(mode: str, device: str, default: ExampleResult) -> str:
    """Why a mode is not run ("" when it is)."""
    if mode == "reduce-overhead" and device != "cuda":
        return "not measured on CPU (it replays CUDA graphs)"
    if default.outcome != "ok":
        return f"not run: the default mode did not finish ({default.outcome})"
    return ""


def mode_result(mode: str, run: ExampleResult) -> ModeResult:
    """What a mode's own worker measured, or how it ended."""
    if run.outcome == "ok" and run.modes:
        return run.modes[0]
    status = "timeout" if run.outcome == "timeout" else "error"
    return ModeResult(mode, status=status, note=(run.message.strip().splitlines() or [run.outcome])[0])


def interpret(base: ExampleResult, outcome: ProcessOutcome, written: Optional[dict]) -> ExampleResult:
    """Combine the worker's (possibly partial) result file with how its process ended."""
    result = ExampleResult.from_dict(written["result"]) if written else base
    result = result.with_(slot=base.slot, wall_s=outcome.wall_s)
    phase = result.phase or "start"
    if outcome.timed_out:
        message = f"timed out after {outcome.wall_s:.1f} s during phase '{phase}'; its process group was killed"
        return result.with_(outcome="timeout", message=message)
    if written and written.get("final") and outcome.returncode == 0:
        return result
    return result.with_(outcome="crashed", message=f"worker {outcome.describe_exit()} during phase '{phase}'\n"
                                                   + _tail(outcome.log_tail))


def _read_result(path: Path) -> Optional[dict]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _worker_env(slot: Slot) -> dict:
    """The caller's environment, the slot's GPU, and dynlint importable even when it is not installed."""
    env = slot.environ(dict(os.environ))
    here = str(Path(dynlint.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH", "")) if p)
    env.setdefault("PYTHONFAULTHANDLER", "1")
    return env


def _tail(text: str, lines: int = _LOG_LINES_IN_MESSAGE) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])
