"""Why do two processes time the same compiled model differently? One setting per fresh process (GPU).

    python bench/speedup_gap.py --model efficientnet_b0 [--json OUT] [--reps 50] [--soak 200] [--deadline S]
    python bench/speedup_gap.py --one NAME --model efficientnet_b0             # one setting (a child process)

Each setting builds the model as bench/speedup_agreement.py does, compiles it, and then times eager and
compiled in the same process, each method on both sides (which side goes first alternating by method):

- block:       blocks of 20 back-to-back calls, the device synchronised around each block
- one_wall:    one call, synchronised before and after, host clock
- one_events:  one call between two CUDA events, synchronised after (the independent harness's first method)
- host:        the host time of one call from an empty queue, before the synchronisation
- interleaved: one eager and one compiled call in turn, each between CUDA events, synchronised after
- dynlint_blocks, dynlint_one: dynlint's own code (runtime_check/timing.py `measure` with the worker's
  Timer, `--budget` seconds each): its rounds of blocks, and one call at a time

twice: right after the warm-up calls, and again after `--soak` more calls of each (once with `--soak 0`).
For each method and side it records the SM clock before and after, the machine's CPU load during it (busy
and stolen share of all CPUs, the CPU seconds of this process's children: Inductor's compile workers), and
for `host` and `one_events` every call's time; then the kernels' time per call (the profiler, last) and the
settings that could differ between two processes (grad mode, TF32, cudnn, Inductor's launcher and random
options).

The settings (`SETTINGS`) vary one thing at a time from the independent harness (plain `torch.compile`, one
model shared by eager and compiled, 5 warm-ups) towards dynlint's worker (its own backend, two builds of the
model, Inductor's `fallback_random`, the log collector open, eager calls before compiling), plus all of those
together and `no_grad`. Results: docs/benchmarks.md, "Why efficientnet_b0 disagreed".

Needs what bench/speedup_agreement.py needs; pynvml, for the SM clock, is read when present.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import speedup_agreement as agreement  # noqa: E402 - beside this file, on the path just above

SETTINGS = {                   # in the order they run (a deadline drops the last)
    "independent": {},
    "worker_like": {"backend": "dynlint", "copies": True, "fallback_random": True, "collector": True,
                    "eager_first": True},
    "dynlint_backend": {"backend": "dynlint"},
    "two_builds": {"copies": True},
    "eager_first": {"eager_first": True},
    "no_grad": {"no_grad": True},
    "fallback_random": {"fallback_random": True},
    "collector": {"collector": True},
}


def sm_clock_mhz():
    try:
        import pynvml

        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(int((os.environ.get("CUDA_VISIBLE_DEVICES") or "0").split(",")[0]))
        return pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM)
    except Exception:                         # noqa: BLE001 - no NVML: no clock reading
        return None


def methods(torch, reps):
    def block(f, k=20, times=None):
        out = []
        for _ in range(times or max(3, reps // 5)):
            torch.cuda.synchronize()
            t = time.perf_counter()
            for _ in range(k):
                f()
            torch.cuda.synchronize()
            out.append((time.perf_counter() - t) / k * 1e3)
        return out

    def one_wall(f):
        return block(f, 1, reps)

    def one_events(f):
        return [agreement.event_ms(f) for _ in range(reps)]

    def host(f):
        out = []
        for _ in range(reps):
            torch.cuda.synchronize()
            t = time.perf_counter()
            f()
            out.append((time.perf_counter() - t) * 1e3)
            torch.cuda.synchronize()
        return out

    return {"block": block, "one_wall": one_wall, "one_events": one_events, "host": host}


def dynlint_measure(eager, compiled, budget_s: float, calls_per_block=None) -> dict:
    """dynlint's own method (runtime_check/timing.py with the worker's Timer), as `--verify` runs it."""
    from dynlint.runtime_check import timing
    from dynlint.runtime_check.measure import Timer

    s = timing.measure(Timer(True).block_s, eager, compiled, budget_s, calls_per_block=calls_per_block)
    return {"eager_ms": s.eager_ms, "compiled_ms": s.compiled_ms, "speedup": s.speedup, "low": s.low,
            "high": s.high, "rounds": s.rounds,
            "calls_per_block": f"{s.eager_calls_per_block}/{s.compiled_calls_per_block}"}


def one(name: str, model_name: str, soak: int, reps: int, budget_s: float) -> dict:
    import torch
    import torch._inductor.config as iconfig

    s = dict(SETTINGS[name])
    device = "cuda"
    load = agreement.Load()
    if s.get("fallback_random"):
        iconfig.fallback_random = True
    eager_fn, args = agreement.build(model_name, device)
    comp_model = agreement.build(model_name, device)[0] if s.get("copies") else eager_fn
    if s.get("eager_first"):              # dynlint's worker runs every call eagerly before it compiles
        for _ in range(2):
            eager_fn(*args)
        torch.cuda.synchronize()
    collector = None
    if s.get("backend") == "dynlint":
        from dynlint.compiler.backend import DynlintBackend

        backend = DynlintBackend(lambda path: False)
    else:
        backend = "inductor"
    if s.get("collector"):
        from dynlint.compiler.capture import Collector

        collector = Collector(lambda path: False).__enter__()
    compiled_fn = torch.compile(comp_model, backend=backend)
    grad = torch.no_grad() if s.get("no_grad") else torch.enable_grad()
    with grad:
        start = time.perf_counter()
        compiled_fn(*args)
        torch.cuda.synchronize()
        compile_s = time.perf_counter() - start
        eager, compiled = (lambda: eager_fn(*args)), (lambda: compiled_fn(*args))
        for _ in range(s.get("warmup", 5)):
            eager()
        for _ in range(s.get("warmup", 5)):
            compiled()
        torch.cuda.synchronize()
        ways = methods(torch, reps)
        phases = {}
        for phase in ("early", "late")[:1 if soak == 0 else 2]:
            if phase == "late":
                for f in (eager, compiled):
                    for _ in range(soak):
                        f()
                torch.cuda.synchronize()
            res = {}
            for i, (way, fn) in enumerate(ways.items()):
                order = (("eager", eager), ("compiled", compiled)) if i % 2 == 0 else \
                    (("compiled", compiled), ("eager", eager))
                for label, f in order:
                    clock0, mark = sm_clock_mhz(), load.mark()
                    times = fn(f)
                    res[f"{way}_{label}_ms"] = statistics.median(times)
                    res[f"{way}_{label}_clock_mhz"] = (clock0, sm_clock_mhz())
                    res[f"{way}_{label}_load"] = load.since(mark)
                    if way in ("host", "one_events"):
                        res[f"{way}_{label}_samples"] = [round(t, 4) for t in times]
                res[f"{way}_speedup"] = res[f"{way}_eager_ms"] / res[f"{way}_compiled_ms"]
            mark = load.mark()
            te, tc = agreement.interleaved(eager, compiled, reps)
            res["interleaved_eager_ms"], res["interleaved_compiled_ms"] = statistics.median(te), statistics.median(tc)
            res["interleaved_speedup"] = res["interleaved_eager_ms"] / res["interleaved_compiled_ms"]
            res["interleaved_load"] = load.since(mark)
            # dynlint's own timing code on the same two callables: its blocks (as many calls as fill 20 ms)
            # and one call at a time
            for key, k in (("dynlint_blocks", None), ("dynlint_one", 1)):
                clock0, mark = sm_clock_mhz(), load.mark()
                res[key] = dynlint_measure(eager, compiled, budget_s, k)
                res[key]["clock_mhz"], res[key]["load"] = (clock0, sm_clock_mhz()), load.since(mark)
            phases[phase] = res
        kern = {"eager": agreement.kernels_ms(eager), "compiled": agreement.kernels_ms(compiled)}
    if collector is not None:
        collector.__exit__(None, None, None)
    return {
        "setting": name, "options": s, "model": model_name, "compile_s": compile_s, "phases": phases,
        "kernels_ms": kern,
        "state": {
            "grad_enabled": torch.is_grad_enabled(),
            "params_require_grad": any(p.requires_grad for p in comp_model.parameters()),
            "cudnn_benchmark": torch.backends.cudnn.benchmark,
            "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
            "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
            "float32_matmul_precision": torch.get_float32_matmul_precision(),
            "inductor_fallback_random": iconfig.fallback_random,
            "inductor_static_cuda_launcher": getattr(iconfig, "use_static_cuda_launcher", None),
            "inductor_cudagraphs": iconfig.triton.cudagraphs,
            "cpu_affinity": len(os.sched_getaffinity(0)),
            "loadavg": os.getloadavg(),
        },
        "torch": torch.__version__,
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="efficientnet_b0")
    ap.add_argument("--settings", default=",".join(SETTINGS))
    ap.add_argument("--soak", type=int, default=200, help="calls of each between the early and late timings")
    ap.add_argument("--reps", type=int, default=50, help="calls timed per method and side")
    ap.add_argument("--budget", type=float, default=1.5, help="seconds for each of dynlint's two measurements")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--deadline", type=float, default=0, help="seconds: start no setting after this")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one(a.one, a.model, a.soak, a.reps, a.budget)))
        return 0
    results = []
    began = time.perf_counter()
    for name in a.settings.split(","):
        if a.deadline and time.perf_counter() - began > a.deadline:
            print(f"deadline: {name} and the settings after it not run", flush=True)
            break
        t0 = time.perf_counter()
        try:
            r = subprocess.run([sys.executable, __file__, "--one", name, "--model", a.model, "--soak", str(a.soak),
                                "--reps", str(a.reps), "--budget", str(a.budget)],
                               capture_output=True, text=True, timeout=600)
            row = json.loads(r.stdout.strip().splitlines()[-1])
        except subprocess.TimeoutExpired:
            row = {"setting": name, "error": "timed out after 600 s"}
        except (ValueError, IndexError):
            row = {"setting": name, "error": r.stderr.strip()[-2000:]}
        results.append(row)
        if "error" in row:
            print(f"{name:<16} error: {row['error'][-400:]}", flush=True)
        else:
            for phase, p in row["phases"].items():
                print(f"{name:<16} {phase:<5} " + "  ".join(
                    f"{w} {p[w + '_eager_ms']:.2f}/{p[w + '_compiled_ms']:.2f}={p[w + '_speedup']:.2f}x"
                    for w in ("block", "one_wall", "one_events", "host", "interleaved")), flush=True)
                print(f"{'':<16} {phase:<5} dynlint blocks " + "  ".join(
                    f"{k} {p[k]['eager_ms']:.2f}/{p[k]['compiled_ms']:.2f}={p[k]['speedup']:.2f}x "
                    f"(k={p[k]['calls_per_block']}, {p[k]['rounds']} rounds)"
                    for k in ("dynlint_blocks", "dynlint_one"))
                    + "  clocks " + " ".join(f"{w}:{p[w + '_compiled_clock_mhz']}" for w in ("block", "one_events"))
                    + "  cpu busy/steal " + " ".join(
                        f"{w}:{(p[w + '_compiled_load'] or {}).get('cpu_busy') or 0:.2f}/"
                        f"{(p[w + '_compiled_load'] or {}).get('cpu_steal') or 0:.3f}"
                        for w in ("block", "one_events")),
                    flush=True)
            print(f"{'':<16} kernels {row['kernels_ms']['eager']:.2f}/{row['kernels_ms']['compiled']:.2f} ms, "
                  f"compile {row['compile_s']:.1f} s, {time.perf_counter() - t0:.0f} s, state {row['state']}",
                  flush=True)
        if a.json:
            a.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
