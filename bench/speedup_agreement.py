"""Does dynlint's reported speedup agree with an independent measurement? (GPU)

    python bench/speedup_agreement.py [--rounds 3] [--models a,b] [--json OUT] [--deadline SECONDS]

The models: timm models at batch 32 (random weights from timm's registry, nothing downloaded), transformers
models built from small configs, and the bundled examples. Each round runs, for every model, dynlint's verify
(one project of `@dynlint.example` factories: dynlint's backend over Inductor and its interval method,
runtime_check/timing.py) and then, in a fresh process, an independent harness on the same model and inputs:
plain `torch.compile` (Inductor's default backend), 2 s of warm-up calls of both, then 50 eager and 50
compiled calls interleaved (one of each in turn, which goes first alternating), each timed with CUDA events
and synchronised after, the ratio of the medians; and `triton.testing.do_bench`. Both call the model as the
example does (no `no_grad`). The harness's first method, 5 warm-ups and 50 eager calls, then 5 warm-ups and
50 compiled calls, is kept beside it (`sequential_speedup`, right after compiling), with the machine's CPU
load during each window, and the kernels' time per call (the profiler); `--diagnose` adds that method
again after the interleaved calls (`sequential_late_speedup`) and a second build of the model compiled on
its own, as dynlint's worker does (`separate_build_speedup`). Interleaving is there because the host's speed can change by 2x from one half-second
window to the next (measured: docs/benchmarks.md, "Why efficientnet_b0 disagreed"); timing all eager calls,
then all compiled calls, lets such a change land on one side only.

The verdict per model compares dynlint's median speedup over the rounds with the independent harness's median
(CUDA events): within 10%, or else whether dynlint's intervals hold the independent figure (they say why not).
For a launch-bound model dynlint also times one call at a time (synchronised after each, as the independent
harness does); its median is compared too (`dynlint_one_call`).
`--json` keeps every round (`--resume` adds rounds to a file written before); a deadline stops before a round
that would not finish in time, the rounds so far kept.

Needs a GPU, torch with triton, timm and transformers (none of them a dynlint dependency: this is a GPU
benchmark, not a test); psutil, for the CPU load, is read when present.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
TIMM = ("resnet50", "vit_base_patch16_224", "convnext_tiny", "efficientnet_b0", "levit_128")
TRANSFORMERS = ("bert", "gpt2")
BUNDLED = ("pointwise_gelu", "tinygpt_forward")
MODELS = TIMM + TRANSFORMERS + BUNDLED


def build(name: str, device: str):
    """(model, args) for one model, seeded: the verify example and the independent harness build the same."""
    import torch

    torch.manual_seed(0)
    if name in TIMM:
        import timm

        model = timm.create_model(name, pretrained=False).eval().to(device)
        size = model.pretrained_cfg.get("input_size", (3, 224, 224))
        return model, (torch.randn(32, *size, device=device),)
    if name == "bert":
        from transformers import BertConfig, BertModel

        cfg = BertConfig(hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=1024)
        return BertModel(cfg).eval().to(device), (torch.randint(0, cfg.vocab_size, (32, 128), device=device),)
    if name == "gpt2":
        from transformers import GPT2Config, GPT2Model

        cfg = GPT2Config(n_embd=256, n_layer=4, n_head=4, n_positions=256)
        return GPT2Model(cfg).eval().to(device), (torch.randint(0, cfg.vocab_size, (32, 128), device=device),)
    sys.path.insert(0, str(EXAMPLES))
    import dynlint_examples

    if name == "pointwise_gelu":
        fn, calls = dynlint_examples.pointwise_gelu(device=device)
        return fn, calls[0]
    model, calls = dynlint_examples.tinygpt_forward()
    return model.to(device), tuple(a.to(device) for a in calls[0])


EXAMPLE = '''
@dynlint.example(name={name!r}, timeout=900)
def make_{ident}(device="cpu"):
    model, args = agreement.build({name!r}, device)
    return model, [args]
'''


def dynlint_round(models, device: str, budget: float) -> dict:
    """dynlint's verify on every model (a project of one example per model, in a temp folder)."""
    from dynlint.runtime_check import run_verify

    with tempfile.TemporaryDirectory() as d:
        src = ["import sys", f"sys.path.insert(0, {str(Path(__file__).parent)!r})", "import dynlint",
               "import speedup_agreement as agreement"]
        src += [EXAMPLE.format(name=m, ident=m.replace("-", "_")) for m in models]
        Path(d, "agreement_examples.py").write_text("\n".join(src) + "\n")
        report = run_verify(Path(d), ["agreement_examples.py"], device=device, timeout=900, time_budget_s=budget)
    return {e["name"]: e for e in report.to_dict()["examples"]}


class Load:
    """What else the machine did during a timing window: the busy and stolen share of all CPUs (/proc/stat),
    and the CPU seconds this process's children (Inductor's compile workers) used. psutil when present."""

    def __init__(self):
        try:
            import psutil
        except ImportError:
            psutil = None
        self.psutil = psutil

    def mark(self):
        if self.psutil is None:
            return None
        me = self.psutil.Process()
        kids = 0.0
        for c in me.children(recursive=True):
            try:
                t = c.cpu_times()
                kids += t.user + t.system
            except self.psutil.Error:
                pass
        return self.psutil.cpu_times(), kids, len(me.children(recursive=True))

    def since(self, mark) -> dict:
        now = self.mark()
        if mark is None or now is None:
            return {}
        (a, ka, _), (b, kb, n) = mark, now
        total = sum(b) - sum(a)
        idle = (b.idle + getattr(b, "iowait", 0)) - (a.idle + getattr(a, "iowait", 0))
        return {"cpu_busy": (total - idle) / total if total else None,
                "cpu_steal": (getattr(b, "steal", 0) - getattr(a, "steal", 0)) / total if total else None,
                "children_cpu_s": kb - ka, "children": n}


def kernels_ms(f, calls: int = 10):
    """The device's time in kernels per call (the profiler's sum), as dynlint's worker reports it."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    try:
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(calls):
                f()
            torch.cuda.synchronize()
    except Exception:                     # noqa: BLE001 - no profiler: no kernel time
        return None
    return sum(getattr(e, "self_device_time_total", 0) for e in prof.key_averages()) / 1e3 / calls


def event_ms(f) -> float:
    """One call of f between two CUDA events, synchronised after: its milliseconds."""
    import torch

    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    f()
    end.record()
    torch.cuda.synchronize()
    return begin.elapsed_time(end)


def interleaved(eager, compiled, repeats: int):
    """One eager and one compiled call in turn (which goes first alternating), each timed by event_ms: the
    per-call times of each side."""
    times = ([], [])
    for i in range(repeats):
        for which in ((0, 1) if i % 2 == 0 else (1, 0)):
            times[which].append(event_ms((eager, compiled)[which]))
    return times


def independent(name: str, device: str, repeats: int = 50, warm_s: float = 2.0, diagnose: bool = False) -> dict:
    """The independent figure: plain torch.compile, then the compiled and eager calls interleaved (one of
    each in turn, which goes first alternating), each call timed with CUDA events and synchronised after,
    medians of `repeats` each, after `warm_s` seconds of warm-up calls of both. Also, for comparison, the
    harness's first method (`sequential_*`: 5 warm-ups and 50 eager calls, then 5 and 50 compiled, right
    after compiling) with the machine's load during its windows, and do_bench. `diagnose` adds the sequential
    method again after the interleaved timing, and the compiled side on a second build of the model (as
    dynlint's worker compiles it), interleaved with the same eager calls."""
    import torch
    from triton.testing import do_bench

    load = Load()
    model, args = build(name, device)
    compiled = torch.compile(model)
    start = time.perf_counter()
    compiled(*args)
    torch.cuda.synchronize()
    compile_s = time.perf_counter() - start

    def events_ms(f):
        for _ in range(5):
            f(*args)
        torch.cuda.synchronize()
        mark = load.mark()
        times = [event_ms(lambda: f(*args)) for _ in range(repeats)]
        return statistics.median(times), load.since(mark)

    def sequential():
        (eager, eager_load), (comp, comp_load) = events_ms(model), events_ms(compiled)
        return {"eager_ms": eager, "compiled_ms": comp, "speedup": eager / comp, "eager_load": eager_load,
                "compiled_load": comp_load}

    def warm_then_interleaved(eager_fn, compiled_fn):
        until = time.perf_counter() + warm_s
        while time.perf_counter() < until:
            eager_fn(*args)
            compiled_fn(*args)
        torch.cuda.synchronize()
        mark = load.mark()
        eager_t, comp_t = interleaved(lambda: eager_fn(*args), lambda: compiled_fn(*args), repeats)
        return statistics.median(eager_t), statistics.median(comp_t), load.since(mark)

    first = sequential()
    eager, comp, interleaved_load = warm_then_interleaved(model, compiled)
    out = {}
    if diagnose:
        late = sequential()
        # the compiled side on its own build of the model (as dynlint's worker does), interleaved with the same eager
        other = torch.compile(build(name, device)[0])
        other(*args)
        sep_eager, sep_comp, sep_load = warm_then_interleaved(model, other)
        separate = {"eager_ms": sep_eager, "compiled_ms": sep_comp, "speedup": sep_eager / sep_comp, "load": sep_load}
        out = {"sequential_late": late, "separate_build": separate, "separate_build_speedup": separate["speedup"],
               "sequential_late_speedup": late["speedup"]}
    bench_eager, bench_comp = do_bench(lambda: model(*args)), do_bench(lambda: compiled(*args))
    kernels = {"eager": kernels_ms(lambda: model(*args)), "compiled": kernels_ms(lambda: compiled(*args))}
    return {"eager_ms": eager, "kernels_ms": kernels, "compiled_ms": comp, "speedup": eager / comp, "load": interleaved_load,
            "sequential_first": first, "sequential_speedup": first["speedup"], **out,
            "do_bench_eager_ms": bench_eager, "do_bench_compiled_ms": bench_comp,
            "do_bench_speedup": bench_eager / bench_comp, "compile_s": compile_s}


def independent_round(models, device: str, diagnose: bool = False) -> dict:
    out = {}
    for m in models:
        r = subprocess.run([sys.executable, __file__, "--independent", m, "--device", device]
                           + ["--diagnose"] * diagnose, capture_output=True, text=True, timeout=900)
        try:
            out[m] = json.loads(r.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            out[m] = {"error": r.stderr.strip()[-1500:]}
    return out


def summary(rounds: list) -> list:
    rows = []
    for m in sorted({m for r in rounds for m in r["dynlint"]}, key=lambda m: MODELS.index(m) if m in MODELS else 99):
        ours = [r["dynlint"][m] for r in rounds if r["dynlint"].get(m, {}).get("speedup")]
        theirs = [r["independent"][m] for r in rounds if r["independent"].get(m, {}).get("speedup")]
        if not ours or not theirs:
            rows.append({"model": m, "error": "not measured in every round"})
            continue
        d, i = statistics.median(e["speedup"] for e in ours), statistics.median(e["speedup"] for e in theirs)
        b = statistics.median(e["do_bench_speedup"] for e in theirs)
        seq = [e["sequential_speedup"] for e in theirs if e.get("sequential_speedup")]
        held = sum(1 for e in ours if e["speedup_interval"] and e["speedup_interval"][0] <= i <= e["speedup_interval"][1])
        # launch-bound rounds: dynlint also times one call at a time, as the independent harness does
        single = [e["one_call_speedup"] for e in ours if e.get("one_call_speedup")]
        one = statistics.median(single) if single else None
        rows.append({"model": m, "dynlint": d, "dynlint_rounds": [e["speedup"] for e in ours],
                     "intervals": [e["speedup_interval"] for e in ours], "rounds_timed": [e["rounds"] for e in ours],
                     "launch_bound": [e.get("launch_bound") for e in ours],
                     "independent": i, "independent_rounds": [e["speedup"] for e in theirs], "do_bench": b,
                     "independent_sequential": statistics.median(seq) if seq else None, "sequential_rounds": seq,
                     "difference": abs(d - i) / i, "within_10_percent": abs(d - i) <= 0.10 * i,
                     "intervals_holding_independent": held, "dynlint_one_call": one,
                     "one_call_rounds": single, "one_call_difference": abs(one - i) / i if one else None})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--budget", type=float, default=3.0, help="dynlint's --timing-budget per example")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--resume", action="store_true", help="add rounds to those already in --json")
    ap.add_argument("--deadline", type=float, default=0, help="seconds: start no round that would end later (judged by the longest round so far)")
    ap.add_argument("--diagnose", action="store_true",
                    help="the independent harness also repeats its sequential method late and times a second build")
    ap.add_argument("--independent", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.independent:
        print(json.dumps(independent(args.independent, args.device, diagnose=args.diagnose)))
        return 0
    start = time.perf_counter()
    models = [m for m in args.models.split(",") if m]
    doc = json.loads(args.json.read_text()) if args.resume and args.json and args.json.exists() else {"rounds": []}
    while len(doc["rounds"]) < args.rounds:
        doc["rounds"].append({"dynlint": {}, "independent": {}})
    # model by model, every round of one model before the next (the first compile of a model fills Inductor's
    # caches; its later rounds, and the independent harness, hit them), saved after each step
    longest = 0.0                   # the longest round so far: one that would end past the deadline is not started
    for m in models:
        for r in doc["rounds"][:args.rounds]:
            if m in r["dynlint"] and m in r["independent"]:
                continue
            if args.deadline and time.perf_counter() - start + longest > args.deadline:
                print(f"deadline: {m} not measured in every round", flush=True)
                break
            began = time.perf_counter()
            r["dynlint"].update(dynlint_round([m], args.device, args.budget))
            r["independent"].update(independent_round([m], args.device, args.diagnose))
            longest = max(longest, time.perf_counter() - began)
            o, t = r["dynlint"].get(m, {}), r["independent"].get(m, {})
            failed = (f" {o.get('message', '')[:300]}" if o.get("outcome") != "ok" else "") + \
                (f" {t['error'][-300:]}" if "error" in t else "")
            late = (f", late {t['sequential_late_speedup']:.2f}x, separate build {t['separate_build_speedup']:.2f}x"
                    if "sequential_late_speedup" in t else "")
            print(f"{m:<24} dynlint {o.get('speedup') or 0:6.2f}x {o.get('speedup_interval')} "
                  f"({o.get('outcome')}, {o.get('rounds')} rounds, launch-bound {o.get('launch_bound')})  "
                  f"independent {t.get('speedup') or 0:6.2f}x (sequential {t.get('sequential_speedup') or 0:.2f}x"
                  f"{late}) do_bench {t.get('do_bench_speedup') or 0:6.2f}x [{time.perf_counter() - start:.0f} s]"
                  + failed, flush=True)
            first = r["dynlint"].get(m, {})
            doc.update(device=first.get("device") or doc.get("device"),
                       torch=first.get("torch_version") or doc.get("torch"),
                       triton=first.get("triton_version") or doc.get("triton"))
            doc["summary"] = summary([x for x in doc["rounds"] if x["dynlint"]])
            if args.json:
                args.json.write_text(json.dumps(doc, indent=1, default=str))
    for row in doc.get("summary", []):
        if "error" in row:
            print(f"{row['model']:<24} {row['error']}")
        else:
            one = (f"  one call at a time {row['dynlint_one_call']:.2f}x (difference {row['one_call_difference']:.1%})"
                   if row.get("dynlint_one_call") else "")
            print(f"{row['model']:<24} dynlint {row['dynlint']:.2f}x  independent {row['independent']:.2f}x  "
                  f"(do_bench {row['do_bench']:.2f}x)  difference {row['difference']:.1%}  "
                  f"intervals holding it {row['intervals_holding_independent']}/{len(row['intervals'])}{one}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
