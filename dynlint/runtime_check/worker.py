"""Run one example in this (disposable) process: `python -m dynlint.runtime_check.worker REQUEST RESULT [LABEL]`.

REQUEST is a JSON file written by the parent (see verify.py); RESULT receives {"final": bool, "result":
ExampleResult.to_dict()}. The worker checkpoints a non-final result at every phase, so that a crash or a
timeout still tells the parent how far it got; stdout is never parsed (user code may print anything).

Phases: start -> import torch -> import (the example file) -> build (call the factory twice: one target for
eager, one for compiled, so in-place updates cannot leak between them) -> eager (every call once, recording
the user lines that run) -> compiled (every call once under dynlint's backend, collecting graph breaks and
recompiles) -> compare -> timing (rounds of eager and compiled: runtime_check/timing.py) -> done. A training
example's calls are training steps (measure.training_step) on both sides. A request with a "mode" other than
"default" (`--modes`: verify.py runs one worker per mode, each with its own timeout) compiles with that mode
instead: build -> eager -> mode M (compiled, compared and timed) -> done, its figures in `modes[0]`. A request
with "timing_only" (`--timing-processes`: each further timing process is a worker of its own) only times:
build -> compiled (each call once on both sides: compilation, recompiles, warm-up) -> timing -> done, its
figures in `timing_processes[0]`.
"""
from __future__ import annotations

import ast
import faulthandler
import importlib
import importlib.util
import json
import os
import platform
import re
import sys
import traceback
from functools import lru_cache
from typing import List, Optional, Tuple

from dynlint.runtime_check import timing
from dynlint.runtime_check.results import ExampleResult
from dynlint.runtime_check.userfiles import UserFiles


class Worker:
    def __init__(self, request: dict, result_path: str):
        self.request = request
        self.result_path = os.path.abspath(result_path)   # user code may chdir
        self.users = UserFiles(request["project_root"])
        self.fields: dict = dict(name=request["name"], path=request["path"], line=request["line"],
                                 factory=request["factory"], outcome="error", slot=request.get("slot", ""),
                                 python_version=platform.python_version())
        self.collector = None
        self.backend = None
        self.train = None            # a training example: measure.training_step
        self.recorder = None
        self.factory, self.device = None, "cpu"

    # ---- result file -----------------------------------------------------------------------------
    def phase(self, name: str) -> None:
        self.fields["phase"] = name
        self.write(final=False)

    def write(self, final: bool) -> None:
        result = ExampleResult(**self.fields).to_dict()
        tmp = self.result_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({"final": final, "result": result}, f)
        os.replace(tmp, self.result_path)                  # the parent never reads a half-written file

    # ---- the run ---------------------------------------------------------------------------------
    def run(self) -> None:
        self.phase("start")
        device = self.request["device"]
        if device == "cpu":
            # One example per process: Inductor's pool of compile workers costs more to start than it saves.
            os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
        self.phase("import torch")
        # torch, and every module that needs it, loads inside the worker's phases (their time is the example's)
        import torch

        from dynlint.compiler import compat
        from dynlint.runtime_check.measure import Target, Timer, build_target, code_of, qualname_of

        cuda = device == "cuda"
        self.fields.update(
            torch_version=compat.torch_version(), triton_version=(compat.triton_version() or "") if cuda else "",
            device=f"cuda ({torch.cuda.get_device_name(0)})" if cuda else "cpu")
        compat.match_eager_random_numbers()

        self.phase("import")
        module = load_module(self.users.root, self.request["path"])
        factory = self.factory = getattr(module, self.request["factory"])
        self.device = device
        options = dict(getattr(factory, "__dynlint_example__", {}))

        self.phase("build")
        eager, target = build_target(factory, device), build_target(factory, device)
        code = code_of(eager.fn)
        self.fields.update(function=qualname_of(eager.fn), calls=len(eager.calls))
        if code is not None:
            self.fields.update(function_path=self.users.relpath(code.co_filename), function_line=code.co_firstlineno)

        timer = Timer(cuda)
        if options.get("training"):
            from dynlint.runtime_check.measure import training_step

            self.fields["training"] = True
            eager = Target(training_step(eager.fn, eager), eager.calls)
            self.train = training_step                 # the compiled module's step is made once it is compiled
        if self.request.get("timing_only"):
            self.phase("compiled")
            self.run_timing_only(target, eager, timer)
            self.fields.update(outcome="ok", phase="done", message="")
            return
        self.phase("eager")
        eager_outputs, eager_s = self.run_eager(eager, timer)
        mode = self.request.get("mode", "default")
        if mode != "default":
            self.phase(f"mode {mode}")
            self.run_mode(mode, target, eager, eager_outputs, eager_s, timer, options)
        else:
            if self.request.get("save_outputs"):
                save_outputs(eager_outputs, self.request["save_outputs"])
            self.phase("compiled")
            self.run_compiled(target, eager, eager_outputs, eager_s, timer, options)
        self.fields.update(outcome="ok", phase="done", message="")

    def run_eager(self, eager, timer):
        """Each call once with line recording (outputs kept for the comparison), then once more timed."""
        from dynlint.runtime_check.compare import snapshot
        from dynlint.runtime_check.coverage import LineRecorder
        from dynlint.runtime_check.measure import GradProbe, invoke

        self.recorder, grad = LineRecorder(self.users), GradProbe()

        def probed(i, call):
            with grad:
                return invoke(eager.fn, call, i)

        with self.recorder:
            outputs = [snapshot(probed(i, call)) for i, call in enumerate(eager.calls)]
        self.fields.update(executed=self.recorder.by_file(self.users.relpath), grad_off=grad.off)
        seconds = [timer.once_s(lambda: invoke(eager.fn, call, i)) for i, call in enumerate(eager.calls)]
        return outputs, seconds

    def run_compiled(self, target, eager, eager_outputs, eager_s, timer, options) -> None:
        """Compile and call each call once (compile time = first call - eager call), compare, time."""
        from dynlint.compiler.backend import DynlintBackend
        from dynlint.compiler.capture import Collector
        from dynlint.compiler.passes import make_passes
        from dynlint.runtime_check.compare import compare_outputs
        from dynlint.runtime_check.results import TimingProcess

        self.backend = DynlintBackend(self.users, passes=make_passes(self.request.get("passes", ())))
        self.collector = Collector(self.users)
        with self.collector:                     # kept open while timing: those calls may recompile too
            compiled = self.compile(target, self.backend)
            outputs, self.fields["compile_s"] = first_calls(compiled, target, eager_s, timer)
            self.record_compilation()

            self.phase("compare")
            self.fields["agreement"] = compare_outputs(eager_outputs, outputs, options.get("rtol"), options.get("atol"),
                                                       reference=self.float64_outputs)
            if self.request.get("reference_outputs"):
                self.fields["against_original"] = against_reference(
                    self.request["reference_outputs"], eager_outputs, outputs, options)

            self.phase("timing")
            s, run_eager, run_compiled = self.time(eager, compiled, target, timer)
            one = self.time(eager, compiled, target, timer, calls_per_block=1)[0] if timer.cuda else None
            # (one call at a time is timed before the profiler runs: nothing it leaves behind can touch it)
            self.fields.update(eager_ms=s.eager_ms, compiled_ms=s.compiled_ms, speedup_low=s.low,
                               speedup_high=s.high, rounds=s.rounds, speedup_settled=s.settled,
                               eager_device_ms=timer.device_ms(run_eager),
                               compiled_device_ms=timer.device_ms(run_compiled),
                               eager_peak_mem_bytes=timer.peak_bytes(run_eager),
                               compiled_peak_mem_bytes=timer.peak_bytes(run_compiled))
            self.fields["timing_processes"] = (TimingProcess.of(s, os.getpid(), self.fields["compiled_device_ms"]),)
            if one is not None and (timing.launch_bound(s.compiled_ms, self.fields["compiled_device_ms"])
                                    or timing.apart(s, one)):
                self.fields.update(one_call_eager_ms=one.eager_ms, one_call_compiled_ms=one.compiled_ms,
                                   one_call_low=one.low, one_call_high=one.high)
        self.record_compilation()

    def run_timing_only(self, target, eager, timer) -> None:
        """A further timing process: the target compiled as the first worker compiles it, each call once on both
        sides (compilation, the first recompiles, warm-up), then the timing phase alone: no line recording, no
        comparison, no graphs reported."""
        from dynlint.compiler.backend import DynlintBackend
        from dynlint.compiler.passes import make_passes
        from dynlint.runtime_check.measure import invoke
        from dynlint.runtime_check.results import TimingProcess

        compiled = self.compile(target, DynlintBackend(self.users, passes=make_passes(self.request.get("passes", ()))))
        for i, (e, c) in enumerate(zip(eager.calls, target.calls)):
            invoke(eager.fn, e, i)
            invoke(compiled, c, i)
        self.phase("timing")
        s, _, run_compiled = self.time(eager, compiled, target, timer)
        self.fields["timing_processes"] = (TimingProcess.of(s, os.getpid(), timer.device_ms(run_compiled)),)

    def time(self, eager, compiled, target, timer, calls_per_block=None):
        """Rounds of eager and compiled calls with the first call's arguments (runtime_check/timing.py); the
        speedup and the two zero-argument calls timed. Not seeded: torch.manual_seed costs ~0.1 ms, as much
        as a small compiled call."""
        e, c = eager.calls[0], target.calls[0]
        run_eager, run_compiled = lambda: eager.fn(*e.args, **e.kwargs), lambda: compiled(*c.args, **c.kwargs)
        budget = float(self.request.get("time_budget_s", 1.0))
        return timing.measure(timer.block_s, run_eager, run_compiled, budget, calls_per_block=calls_per_block), \
            run_eager, run_compiled

    def compile(self, target, backend):
        """The compiled callable: the target compiled, or for a training example one training step of the
        compiled module (its forward compiled; backward through the compiled graphs' own backward)."""
        import torch

        compiled = torch.compile(target.fn, backend=backend)
        return compiled if self.train is None else self.train(target.fn, target, compiled)

    def run_mode(self, mode, target, eager, eager_outputs, eager_s, timer, options) -> None:
        """One more `torch.compile` mode (this worker's only one): the target compiled with that mode's Inductor
        options, its compile time, outputs and speedup against the eager calls."""
        from dynlint.compiler.backend import DynlintBackend
        from dynlint.compiler.passes import make_passes
        from dynlint.runtime_check.compare import compare_outputs
        from dynlint.runtime_check.results import ModeResult

        compiled = self.compile(target, DynlintBackend(self.users, passes=make_passes(self.request.get("passes", ())),
                                                       mode=mode))
        outputs, compile_s = first_calls(compiled, target, eager_s, timer)
        agreement = compare_outputs(eager_outputs, outputs, options.get("rtol"), options.get("atol"),
                                    reference=self.float64_outputs)
        self.phase("timing")
        s, _, run_compiled = self.time(eager, compiled, target, timer)
        self.fields["modes"] = (ModeResult(
            mode, compile_s=compile_s, compiled_ms=s.compiled_ms, speedup=s.speedup,
            speedup_low=s.low, speedup_high=s.high, rounds=s.rounds, compiled_device_ms=timer.device_ms(run_compiled),
            compiled_peak_mem_bytes=timer.peak_bytes(run_compiled), agreement=agreement.status,
            eager_ms=s.eager_ms),)

    def float64_outputs(self) -> list:
        """The eager outputs' float64 reference (measure.float64_outputs), for the comparison to call when it needs
        one (a worker compares once); raises when none can be made."""
        from dynlint.runtime_check.compare import NoReference, snapshot
        from dynlint.runtime_check.measure import float64_outputs

        if self.train is not None:
            raise NoReference("a training example's steps are not run again in float64")
        return float64_outputs(self.factory, self.device, snapshot)

    def record_compilation(self) -> None:
        """Copy what the backend and the collector saw so far into the result, paths made relative."""
        if self.backend is None or self.collector is None:
            return
        rel = self.users.relpath
        known_files = set(self.recorder.lines) if self.recorder else set()
        recompiles = one_per_site([resolve_recompile(r, known_files) for r in self.collector.recompiles])
        self.fields.update(
            graphs=tuple(g.relative_to(rel) for g in self.backend.graphs),
            graph_breaks=tuple(b.relative_to(rel) for b in self.collector.graph_breaks),
            recompiles=tuple(r.relative_to(rel) for r in recompiles),
            hit_recompile_limit=self.collector.hit_recompile_limit,
        )

    def fail(self, error: BaseException) -> None:
        """User code raised (or called sys.exit): report it with whatever was measured before."""
        phase = self.fields.get("phase", "")
        if isinstance(error, SystemExit):
            message = f"user code called sys.exit({error.code!r}) during phase '{phase}'"
        elif isinstance(error, KeyboardInterrupt):
            message = f"interrupted during phase '{phase}'"
        else:
            lines = traceback.format_exception(type(error), error, error.__traceback__)
            head = "".join(traceback.format_exception_only(type(error), error)).strip()
            message = f"{head} (during phase '{phase}')\n" + "".join(lines)[-3000:]
        self.fields.update(outcome="error", message=message)
        try:
            self.record_compilation()
        except Exception:                                # partial data is a bonus, never a second failure
            pass


def first_calls(compiled, target, eager_s, timer):
    """Each call once, compiled (snapshots of the outputs), and the compile time: the sum over calls of the
    first compiled call's time less the eager call's."""
    from dynlint.runtime_check.compare import snapshot
    from dynlint.runtime_check.measure import invoke

    outputs, compile_s = [], 0.0
    for i, call in enumerate(target.calls):
        out = []
        compile_s += max(0.0, timer.once_s(lambda: out.append(invoke(compiled, call, i))) - eager_s[i])
        outputs.append(snapshot(out[0]))
    return outputs, compile_s


def save_outputs(outputs, path: str) -> None:
    """Keep the eager outputs for a later run to compare with (`--fix --verify`: the original code's outputs).
    Outputs that cannot be pickled are left out; the later run then says it could not compare."""
    import torch

    try:
        torch.save(outputs, path + ".tmp")
        os.replace(path + ".tmp", path)
    except Exception:                    # noqa: BLE001 - user objects may refuse pickling in any way
        try:
            os.unlink(path + ".tmp")
        except OSError:
            pass


def against_reference(path: str, eager_outputs, compiled_outputs, options: dict):
    """This run's eager and compiled outputs vs the reference run's eager outputs (saved by `save_outputs`)."""
    import torch

    from dynlint.runtime_check.compare import compare_outputs
    from dynlint.runtime_check.results import Agreement

    if not os.path.exists(path):
        return Agreement(detail="the original code's outputs were not recorded (it failed, or they cannot be pickled)")
    try:
        reference = torch.load(path, weights_only=False)     # written by our own worker moments ago
    except Exception as e:               # noqa: BLE001
        return Agreement(detail=f"cannot read the original code's outputs: {type(e).__name__}")
    if len(reference) != len(eager_outputs):
        return Agreement("mismatch", where="calls", detail=f"{len(reference)} calls vs {len(eager_outputs)}")
    rtol, atol = options.get("rtol"), options.get("atol")
    eager = compare_outputs(reference, eager_outputs, rtol, atol)
    if eager.status == "mismatch":
        return eager
    compiled = compare_outputs(reference, compiled_outputs, rtol, atol)
    return compiled if compiled.status == "mismatch" else eager


def load_module(root: str, rel_path: str):
    """Import the example file the way the user's code expects: as part of its package when its folder
    is a package, else as a top-level module; the project root (and root/src) go on sys.path."""
    path = os.path.join(root, rel_path)
    folder = os.path.dirname(path)
    parts = [os.path.splitext(os.path.basename(path))[0]]
    while os.path.exists(os.path.join(folder, "__init__.py")) and folder != root:
        parts.insert(0, os.path.basename(folder))
        folder = os.path.dirname(folder)
    for entry in (os.path.join(root, "src"), root, folder):
        if os.path.isdir(entry) and entry not in sys.path:
            sys.path.insert(0, entry)
    if len(parts) > 1:
        return importlib.import_module(".".join(parts))
    spec = importlib.util.spec_from_file_location(parts[0], path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[parts[0]] = module
    spec.loader.exec_module(module)
    return module


def resolve_recompile(recompile, known_files):
    """Fill the recompiled function's line span and turn guard paths cut to their last ~40 characters
    (older torch) into the full path of a known user file."""
    from dataclasses import replace

    candidates = set(known_files) | {recompile.path}
    failures = []
    for f in recompile.failures:
        if f.path and not os.path.isabs(f.path):
            matches = [p for p in candidates if p.endswith(f.path.lstrip("."))]
            f = replace(f, path=matches[0] if len(matches) == 1 else f.path)
        failures.append(f)
    return replace(recompile, failures=tuple(failures),
                   span=function_span(recompile.path, recompile.function, recompile.line))


_STACK_SLOT = re.compile(r"___stack\d+")
_NAME = r"[\w.\[\]'\"()]+?"                       # a name the user's code gives the value (`x`, `self.cache[0]`)


def one_per_site(recompiles: list) -> list:
    """One event per recompile site. A function with a graph break is two code objects, itself and the resume
    function Dynamo makes after the break, and one changed value can fail a guard in both: the same failure at
    the same site (the guard's line, or the function's first), the resume function naming the value by its
    stack slot (`tensor '___stack0' size mismatch ...` beside `tensor 'x' size mismatch ...`). Such twins are
    kept once, under the user's name."""
    kept: list = []
    for rc in recompiles:
        twin = next((i for i, k in enumerate(kept) if _same_site(k, rc)), None)
        if twin is None:
            kept.append(rc)
        elif _STACK_SLOT.search(kept[twin].reason) and not _STACK_SLOT.search(rc.reason):
            kept[twin] = rc
    return kept


def _same_site(a, b) -> bool:
    def site(rc):
        guard = next((g for g in rc.failures if g.line), None)
        return (guard.path, guard.line) if guard else (rc.path, rc.span[0] or rc.line)

    if site(a) != site(b) or a.function != b.function:
        return False
    if a.reason == b.reason:
        return True
    # the same guard, one side naming the value by its stack slot
    for slotted, other in ((a.reason, b.reason), (b.reason, a.reason)):
        parts = _STACK_SLOT.split(slotted)              # the text around the slots
        if len(parts) > 1 and re.fullmatch(_NAME.join(map(re.escape, parts)), other):
            return True
    return False


def function_span(path: str, name: str, line: int) -> Tuple[int, int]:
    """(first, last) line of the function `name` in `path` that starts at or contains `line`
    (decorators included); (0, 0) when it cannot be found."""
    best: Optional[Tuple[int, int]] = None
    for first, last, fn_name in _function_defs(path):
        if fn_name == name and first <= line <= last:
            if best is None or first >= best[0]:          # innermost
                best = (first, last)
    return best or (0, 0)


@lru_cache(maxsize=None)
def _function_defs(path: str) -> List[Tuple[int, int, str]]:
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            out.append((first, getattr(node, "end_lineno", node.lineno) or node.lineno, node.name))
    return out


def main(argv: Optional[List[str]] = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    faulthandler.enable()                  # a segfault leaves a Python traceback in the log the parent reads
    with open(args[0], encoding="utf-8") as f:
        request = json.load(f)
    sys.argv = [os.path.join(request["project_root"], request["path"])]   # what user code would see
    worker = Worker(request, args[1])
    try:
        worker.run()
    except BaseException as e:             # SystemExit and KeyboardInterrupt too: they are user outcomes
        worker.fail(e)
    worker.write(final=True)
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter shutdown: user threads, atexit hooks or compile pools must not hang or fail the worker.
    os._exit(0)


if __name__ == "__main__":
    main()
