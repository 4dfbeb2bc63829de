"""Does alternating eager and compiled calls slow the compiled one under `no_grad`?

    python bench/alternation.py [--model efficientnet_b0] [--device cuda] [--budget 1.5] [--json OUT]
    python bench/alternation.py --model tinygpt_forward --device cpu     # a host-bound model on CPU

One process, the model built as bench/speedup_agreement.py builds it, compiled under `torch.no_grad()`.
Each variant times eager and compiled with dynlint's own code (runtime_check/timing.py `measure` and the
worker's Timer): as `--verify` does (eager and compiled blocks alternating), with Python's garbage collector
off, and each side alternating with itself (eager against eager, compiled against compiled: no switch
between the two), and alternating with one untimed call of the same side before each timed block (so that
no block starts right after a call of the other side). Around each, the caching allocator's counters (device
allocations and frees, retries; CUDA only) and the collector's runs. Then the same with grad enabled, as a
control.
"""
from __future__ import annotations

import argparse
import gc
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="efficientnet_b0")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--budget", type=float, default=1.5)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    import torch

    import speedup_agreement as agreement
    from dynlint.runtime_check import timing
    from dynlint.runtime_check.measure import Timer

    cuda = a.device == "cuda"
    model, args = agreement.build(a.model, a.device)
    compiled = torch.compile(model)
    block = Timer(cuda).block_s

    def warmed(fn, k):                   # one untimed call of the same side, then the timed block
        fn()
        return block(fn, k)
    runs = []
    collections = [0]
    gc.callbacks.append(lambda phase, info: collections.__setitem__(0, collections[0] + (phase == "start")))

    def counters():
        s = torch.cuda.memory_stats() if cuda else {}
        return {k: s.get(k, 0) for k in ("num_device_alloc", "num_device_free", "num_alloc_retries",
                                        "segment.all.current")} | {"gc_runs": collections[0]}

    def variant(name, e, c, gc_off=False, time_block=block):
        before = counters()
        if gc_off:
            gc.disable()
        try:
            s = timing.measure(time_block, e, c, a.budget)
        finally:
            gc.enable()
        after = counters()
        row = {"variant": name, "grad": torch.is_grad_enabled(), "eager_ms": s.eager_ms, "compiled_ms": s.compiled_ms,
               "speedup": s.speedup, "low": s.low, "high": s.high, "rounds": s.rounds, "k": [s.eager_calls_per_block, s.compiled_calls_per_block],
               "counters": {k: after[k] - before[k] for k in after}}
        runs.append(row)
        print(f"{name:<26} grad {row['grad']!s:<5} {s.eager_ms:6.2f} / {s.compiled_ms:6.2f} ms = {s.speedup:5.2f}x "
              f"[{s.low:.2f}-{s.high:.2f}] k={s.eager_calls_per_block}/{s.compiled_calls_per_block} {s.rounds} rounds  {row['counters']}", flush=True)

    for grad in (torch.no_grad, torch.enable_grad):
        with grad():
            eager, comp = (lambda: model(*args)), (lambda: compiled(*args))
            for _ in range(10):
                eager()
                comp()
            Timer(cuda).sync()
            variant("alternating", eager, comp)
            variant("alternating, gc off", eager, comp, gc_off=True)
            variant("eager against eager", eager, eager)
            variant("compiled against compiled", comp, comp)
            variant("alternating again", eager, comp)
            variant("alternating, a call before", eager, comp, time_block=warmed)
    if a.json:
        a.json.write_text(json.dumps({"model": a.model, "device": a.device, "torch": torch.__version__, "runs": runs},
                                     indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
