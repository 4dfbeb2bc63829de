"""What one example's verify run measured. The worker writes `ExampleResult.to_dict()` as JSON, the parent
reads it back with `from_dict`; the same dict is the example's entry in the JSON verify report.

Paths are relative to the project root ('/'-separated), lines 1-based. Times: compile in seconds, steady
state in milliseconds. Fields a run did not reach stay at their defaults (None / empty).
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field, fields, replace
from typing import Dict, FrozenSet, Optional, Sequence, Tuple

from dynlint.compiler.records import GraphBreak, GraphRecord, Recompile
from dynlint.runtime_check import timing

OUTCOMES = ("ok", "error", "timeout", "crashed")
MODE_STATUSES = ("measured", "skipped", "timeout", "error")


@dataclass(frozen=True)
class Agreement:
    """Compiled outputs vs eager outputs, over every call of the example."""
    status: str = "not compared"          # "match" | "mismatch" | "not compared"
    max_abs_diff: Optional[float] = None  # largest |compiled - eager| over all floating-point outputs
    where: str = ""                       # the output holding the first mismatch, e.g. "call 1: out[0]['logits']"
    detail: str = ""                      # what differs (values, shape, dtype, type) or why nothing was compared

    def to_dict(self) -> dict:
        return {"status": self.status, "max_abs_diff": self.max_abs_diff, "where": self.where, "detail": self.detail}


@dataclass(frozen=True)
class TimingProcess:
    """The timing phase of one worker process (`--timing-processes`: each a fresh process; the first is the
    worker that also compiled and compared, the others only build, compile and time)."""
    pid: int
    eager_ms: float                         # medians of one call over its rounds
    compiled_ms: float
    speedup: float
    speedup_low: float                      # its own 95% interval, a bootstrap over its rounds
    speedup_high: float
    rounds: int
    settled: bool                           # its interval reached ±5% before the time budget ran out
    compiled_device_ms: Optional[float] = None       # CUDA: kernel time per compiled call
    eager_rounds_ms: Tuple[float, ...] = ()          # one call's time in each round
    compiled_rounds_ms: Tuple[float, ...] = ()

    @classmethod
    def of(cls, s: "timing.Speedup", pid: int, compiled_device_ms: Optional[float]) -> "TimingProcess":
        return cls(pid, s.eager_ms, s.compiled_ms, s.speedup, s.low, s.high, s.rounds, s.settled, compiled_device_ms,
                   s.eager_rounds_ms, s.compiled_rounds_ms)

    @property
    def launch_bound(self) -> Optional[bool]:
        return timing.launch_bound(self.compiled_ms, self.compiled_device_ms)

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d.update(speedup_interval=[self.speedup_low, self.speedup_high], launch_bound=self.launch_bound)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "TimingProcess":
        known = {f.name for f in fields(cls)}
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in d.items() if k in known})


@dataclass(frozen=True)
class ModeResult:
    """One `torch.compile` mode of an example (`--modes`), measured against the same eager calls. Each mode
    other than "default" runs in a worker of its own, with its own timeout."""
    mode: str
    status: str = "measured"                # one of MODE_STATUSES
    note: str = ""                          # why it was not measured ("" when it was)
    compile_s: Optional[float] = None
    compiled_ms: Optional[float] = None
    speedup: Optional[float] = None
    speedup_low: Optional[float] = None
    speedup_high: Optional[float] = None
    rounds: int = 0
    compiled_device_ms: Optional[float] = None
    compiled_peak_mem_bytes: Optional[int] = None
    agreement: str = "not compared"         # Agreement.status of its outputs against eager
    eager_ms: Optional[float] = None        # the eager time of its own rounds

    @property
    def break_even_calls(self) -> Optional[int]:
        return timing.break_even_calls(self.compile_s, self.eager_ms, self.compiled_ms)

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["speedup_interval"] = [self.speedup_low, self.speedup_high] if self.speedup_low is not None else None
        d["break_even_calls"] = self.break_even_calls
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "ModeResult":
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


@dataclass(frozen=True)
class ExampleResult:
    name: str                             # @example(name=...) or the factory's name
    path: str                             # example file
    line: int                             # line of the factory's `def` (where DYN903 is reported)
    factory: str
    outcome: str                          # one of OUTCOMES
    message: str = ""                     # why it is not "ok" (exception, signal, timeout, stderr tail)
    phase: str = ""                       # last phase the worker reached (see worker.py): start ... done
    function: str = ""                    # qualified name of the compiled callable (Module.forward for modules)
    function_path: str = ""
    function_line: int = 0
    device: str = ""                      # "cpu", or "cuda (<GPU name>)"
    slot: str = ""                        # the worker slot: "cpu", or the GPU index given via CUDA_VISIBLE_DEVICES
    torch_version: str = ""
    triton_version: str = ""              # "" when Triton is not in use
    python_version: str = ""
    calls: int = 0                        # argument tuples the factory returned
    graphs: Tuple[GraphRecord, ...] = ()
    graph_breaks: Tuple[GraphBreak, ...] = ()
    recompiles: Tuple[Recompile, ...] = ()
    hit_recompile_limit: bool = False
    compile_s: Optional[float] = None     # sum over calls of (first compiled call - eager call)
    eager_ms: Optional[float] = None      # median time of one call with the first call's arguments
    compiled_ms: Optional[float] = None
    # the speedup's 95% interval, over `rounds` rounds of eager and compiled (runtime_check/timing.py) in the
    # `timing_processes` (the union of their own intervals); settled: each reached ±5% before the budget ran out
    speedup_low: Optional[float] = None
    speedup_high: Optional[float] = None
    rounds: int = 0
    speedup_settled: bool = False
    timing_processes: Tuple[TimingProcess, ...] = ()
    timing_note: str = ""                 # why fewer processes were timed than asked for (one failed, timed out)
    eager_device_ms: Optional[float] = None         # CUDA only: time in kernels per call (the profiler)
    compiled_device_ms: Optional[float] = None
    # CUDA: one call at a time, the device synchronised after each (timing.py), kept for a launch-bound call
    # and where it disagrees with the blocks of calls
    one_call_eager_ms: Optional[float] = None
    one_call_compiled_ms: Optional[float] = None
    one_call_low: Optional[float] = None
    one_call_high: Optional[float] = None
    eager_peak_mem_bytes: Optional[int] = None      # CUDA only: peak allocated above the baseline
    compiled_peak_mem_bytes: Optional[int] = None
    training: bool = False                # every call was a training step (forward, backward, optimizer step)
    grad_off: bool = False                # the eager calls' torch operations all ran with autograd off
    modes: Tuple[ModeResult, ...] = ()    # --modes: the modes other than "default", each with its status
    agreement: Agreement = field(default_factory=Agreement)
    # `--fix --verify`, the run after the fixes: its outputs (eager, then compiled) vs the original code's eager ones
    against_original: Agreement = field(default_factory=Agreement)
    executed: Tuple[Tuple[str, Tuple[int, ...]], ...] = ()   # user lines run by the eager calls, per file
    wall_s: float = 0.0                   # the worker's whole run, as seen by the parent

    @property
    def speedup(self) -> Optional[float]:
        if self.eager_ms and self.compiled_ms:
            return self.eager_ms / self.compiled_ms
        return None

    @property
    def verdict(self) -> Optional[str]:
        """faster / slower / no measurable difference (the interval holds 1.0)."""
        if self.speedup_low is None or self.speedup_high is None:
            return None
        return timing.verdict(self.speedup_low, self.speedup_high)

    @property
    def one_call_speedup(self) -> Optional[float]:
        """The speedup of one call at a time (kept for a launch-bound call, or where it disagrees)."""
        if self.one_call_eager_ms and self.one_call_compiled_ms:
            return self.one_call_eager_ms / self.one_call_compiled_ms
        return None

    @property
    def launch_bound(self) -> Optional[bool]:
        """Whether the compiled call is launch-bound: only when every timing process agrees (else None)."""
        flags = {p.launch_bound for p in self.timing_processes} or \
            {timing.launch_bound(self.compiled_ms, self.compiled_device_ms)}
        return flags.pop() if len(flags) == 1 else None

    @property
    def launch_bound_varied(self) -> bool:
        """Launch-bound in some timing processes and not in others."""
        return {True, False} <= {p.launch_bound for p in self.timing_processes}

    def across_processes(self, more: Sequence[TimingProcess], note: str = "") -> "ExampleResult":
        """This result with the timing of further processes added: the medians over every process's rounds,
        the interval spanning them (timing.across_processes), settled when each process's was."""
        processes = self.timing_processes + tuple(more)
        result = self.with_(timing_processes=processes, timing_note=note)
        if len(processes) < 2:
            return result
        _, low, high = timing.across_processes([(p.eager_rounds_ms, p.compiled_rounds_ms) for p in processes])
        return result.with_(eager_ms=statistics.median([t for p in processes for t in p.eager_rounds_ms]),
                            compiled_ms=statistics.median([t for p in processes for t in p.compiled_rounds_ms]),
                            speedup_low=low, speedup_high=high,
                            rounds=sum(p.rounds for p in processes),
                            speedup_settled=all(p.settled for p in processes))

    @property
    def break_even_calls(self) -> Optional[int]:
        return timing.break_even_calls(self.compile_s, self.eager_ms, self.compiled_ms)

    @property
    def default_mode(self) -> ModeResult:
        """The default mode's figures (this result's own) as a ModeResult, beside the other modes."""
        measured = self.compiled_ms is not None and self.outcome == "ok"
        status = "measured" if measured else "timeout" if self.outcome == "timeout" else "error"
        note = "" if measured else (self.message.strip().splitlines() or [f"the example's outcome: {self.outcome}"])[0]
        return ModeResult("default", status=status, note=note, compile_s=self.compile_s, compiled_ms=self.compiled_ms,
                          speedup=self.speedup, speedup_low=self.speedup_low, speedup_high=self.speedup_high,
                          rounds=self.rounds, compiled_device_ms=self.compiled_device_ms,
                          compiled_peak_mem_bytes=self.compiled_peak_mem_bytes, agreement=self.agreement.status,
                          eager_ms=self.eager_ms)

    @property
    def recommended_mode(self) -> Optional[str]:
        """With --modes: the fastest mode whose outputs agree and that is measurably faster than eager; the
        default mode when the fastest is not measurably faster than it (their intervals overlap). None when
        no mode is measurably faster than eager."""
        if not self.modes:
            return None
        default = self.default_mode
        ok = [m for m in (default,) + self.modes if m.speedup is not None and m.speedup_low is not None
              and m.agreement == "match" and m.speedup_low > 1.0]
        if not ok:
            return None
        best = max(ok, key=lambda m: m.speedup)
        if best is not default and default in ok and best.speedup_low <= default.speedup_high:
            return "default"           # no measurable gain over the default mode
        return best.mode

    @property
    def kernels(self) -> Optional[int]:
        counted = [g.kernels for g in self.graphs if g.kernels >= 0]
        return sum(counted) if counted else None

    @property
    def break_sites(self) -> int:
        """Distinct (location, gb_types) among the breaks: a duplicate or a re-traced loop counts once."""
        return len({(b.path, b.line, b.reported_path, b.reported_line, b.gb_types) for b in self.graph_breaks})

    def executed_lines(self) -> Dict[str, FrozenSet[int]]:
        return {path: frozenset(lines) for path, lines in self.executed}

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["graphs"] = [g.to_dict() for g in self.graphs]
        d["graph_breaks"] = [b.to_dict() for b in self.graph_breaks]
        d["recompiles"] = [r.to_dict() for r in self.recompiles]
        d["agreement"] = self.agreement.to_dict()
        d["against_original"] = self.against_original.to_dict()
        d["executed"] = {path: list(lines) for path, lines in self.executed}
        # every requested mode, "default" first (its figures are this result's own, repeated)
        d["modes"] = [m.to_dict() for m in (self.default_mode,) + self.modes] if self.modes else []
        d["timing_processes"] = [p.to_dict() for p in self.timing_processes]
        d.update(speedup=self.speedup, kernels=self.kernels, break_sites=self.break_sites,
                 graph_count=len(self.graphs), recompile_count=len(self.recompiles),
                 speedup_interval=[self.speedup_low, self.speedup_high] if self.speedup_low is not None else None,
                 verdict=self.verdict, launch_bound=self.launch_bound,
                 launch_bound_varied=self.launch_bound_varied, break_even_calls=self.break_even_calls,
                 recommended_mode=self.recommended_mode, one_call_speedup=self.one_call_speedup,
                 one_call_interval=[self.one_call_low, self.one_call_high] if self.one_call_low is not None else None)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "ExampleResult":
        known = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in known}
        kw["graphs"] = tuple(GraphRecord.from_dict(g) for g in d.get("graphs", ()))
        kw["graph_breaks"] = tuple(GraphBreak.from_dict(b) for b in d.get("graph_breaks", ()))
        kw["recompiles"] = tuple(Recompile.from_dict(r) for r in d.get("recompiles", ()))
        kw["agreement"] = Agreement(**d.get("agreement", {}))
        kw["timing_processes"] = tuple(TimingProcess.from_dict(p) for p in d.get("timing_processes", ()))
        kw["modes"] = tuple(ModeResult.from_dict(m) for m in d.get("modes", ()) if m["mode"] != "default")
        kw["against_original"] = Agreement(**d.get("against_original", {}))
        kw["executed"] = tuple(sorted((p, tuple(sorted(ls))) for p, ls in dict(d.get("executed", {})).items()))
        return cls(**kw)

    def with_(self, **changes) -> "ExampleResult":
        return replace(self, **changes)
