"""Development zoo: where real TorchDynamo breaks the graph and recompiles in a model library's own code.

For every model of a library (transformers, diffusers, timm, torchvision, torchaudio: an adapter in libs/ says how
to enumerate its models, build each small with random weights and make two calls' inputs), one subprocess per
(model, mode) builds it on CPU, runs it eagerly under a line tracer (which lines of the library executed), then
under `torch.compile(backend=<eager>)` at two input shapes, and records every graph break and recompile from
Dynamo's `graph_breaks` / `recompiles` artifact logs (the recipe of dynlint/compiler/capture.py) and the
library lines Dynamo traced. Results: one JSON line per model x mode in
bench/zoo/results/<library>-<version>.jsonl, appended as each finishes; a re-run skips what is there.

    python bench/zoo/collect.py                       # transformers, everything not yet in its results file
    python bench/zoo/collect.py --library timm --sample --jobs 1
    python bench/zoo/collect.py --models bert,gpt2 --limit 5 --timeout 120 --jobs 2

This is a bench script: it needs torch and the library (see bench/zoo/README.md for the environments); nothing is
downloaded (HF_HUB_OFFLINE=1, weights are random). See bench/zoo/README.md for the record's fields.
"""
import argparse
import collections
import concurrent.futures
import dis
import importlib
import json
import logging
import os
import re
import signal
import subprocess
import sys
import sysconfig
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from libs import LIBRARIES, Case, Skip, short_error  # noqa: E402

RESULT_MARK = "ZOO_RESULT "          # the child's one result line on stdout (models may print too)


def adapter(library):
    """libs/<library>.py for the five libraries; any other name is a module on sys.path (the tests' toy one)."""
    return importlib.import_module(f"libs.{library}" if library in LIBRARIES else library)


# ---------------------------------------------------------------------------------------------------
# Parent: enumerate, schedule, write results
# ---------------------------------------------------------------------------------------------------
def versions(lib):
    import torch

    return {"torch": torch.__version__, **lib.versions(), "python": sys.version.split()[0]}


def read_done(path, header):
    """Keys (model, mode, class) already in the results file; refuses a file written with other versions."""
    done = set()
    if not os.path.exists(path):
        return done
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            if rec.get("header"):
                if {k: rec.get(k) for k in header} != header:
                    sys.exit(f"{path} was written with {rec}, not {header}: one torch version per file")
            else:
                done.add((rec["model"], rec["mode"], rec.get("cls")))
    return done


_running = {}                        # pid -> Popen, so a stop can end the children it started
_stopping = threading.Event()


def run_one(library, model, cls_name, mode, timeout):
    start = time.time()
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", library, model, cls_name, mode]
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               OMP_NUM_THREADS="1")
    env.pop("TORCH_LOGS", None)
    # A session of its own, so a timeout ends the child and anything it started.
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    _running[proc.pid] = proc
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return {"model": model, "mode": mode, "cls": cls_name, "status": "timeout",
                "error": f"no result within {timeout} s", "seconds": round(time.time() - start, 1)}
    finally:
        _running.pop(proc.pid, None)
    for line in reversed(out.splitlines()):
        if line.startswith(RESULT_MARK):
            return json.loads(line[len(RESULT_MARK):])
    tail = [l for l in err.splitlines() if l.strip()][-3:]
    return {"model": model, "mode": mode, "cls": cls_name, "status": "crash",
            "error": f"rc {proc.returncode}: " + " | ".join(l[:200] for l in tail),
            "seconds": round(time.time() - start, 1)}


def stop_children(*_):
    _stopping.set()
    for pid in list(_running):
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--library", default="transformers", help=f"one of {', '.join(LIBRARIES)}")
    ap.add_argument("--models", help="comma-separated model names (default: all)")
    ap.add_argument("--sample", action="store_true", help="the adapter's sample: a few models per family")
    ap.add_argument("--limit", type=int, help="at most this many models not yet done")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per model x mode")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", help="results file (default: bench/zoo/results/<library>-<version>.jsonl)")
    ap.add_argument("--worker", nargs=4, metavar=("LIBRARY", "MODEL", "CLASS", "MODE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(*args.worker)

    lib = adapter(args.library)
    header = versions(lib)
    release = header[args.library].split("+")[0]        # the header keeps a local label (+cu130), the name not
    path = args.out or os.path.join(HERE, "results", f"{args.library}-{release}.jsonl")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    done = read_done(path, header)
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(json.dumps({"header": True, **header}) + "\n")

    jobs_by_model = collections.defaultdict(list)
    for model, cls_name, modes in lib.jobs(args.sample):
        jobs_by_model[model] += [(model, mode, cls_name) for mode in modes]
    wanted = args.models.split(",") if args.models else list(jobs_by_model)
    unknown = [(None, None, None)]   # an unknown model: recorded as skipped
    pending = [(m, mode or "eval", c) for m in wanted for _, mode, c in jobs_by_model.get(m, unknown)
               if (m, mode or "eval", c) not in done]
    todo_models = list(dict.fromkeys(m for m, _, _ in pending))
    if args.limit is not None:
        todo_models = todo_models[:args.limit]
    jobs = [j for j in pending if j[0] in todo_models]
    print(f"{len(done)} done, {len(jobs)} to run ({len(todo_models)} models)", flush=True)

    signal.signal(signal.SIGTERM, stop_children)
    signal.signal(signal.SIGINT, stop_children)
    lock = threading.Lock()

    def task(model, mode, cls_name):
        if _stopping.is_set():
            return
        if cls_name is None:
            rec = {"model": model, "mode": mode, "cls": None, "status": "skipped",
                   "reason": "no model class" if model in jobs_by_model else "unknown model"}
        else:
            rec = run_one(args.library, model, cls_name, mode, args.timeout)
        if _stopping.is_set():       # a child killed by the stop is not a result
            return
        with lock:
            with open(path, "a") as f:
                f.write(json.dumps(rec, separators=(",", ":")) + "\n")
            print(f"{model:32} {mode:5} {rec['status']:13} {rec.get('seconds', 0):6}s "
                  f"breaks={len(rec.get('breaks', []))} recompiles={len(rec.get('recompiles', []))} "
                  f"{rec.get('reason') or rec.get('error') or ''}"[:220], flush=True)

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for fut in [pool.submit(task, *job) for job in jobs]:
            fut.result()


# ---------------------------------------------------------------------------------------------------
# Worker: one (model, mode) in its own process
# ---------------------------------------------------------------------------------------------------
class Paths:
    """Turns absolute file names into short, machine-independent ones."""

    def __init__(self, package):
        module = importlib.import_module(package)
        self.lib_dir = os.path.dirname(module.__file__) + os.sep
        self.roots = [os.path.dirname(self.lib_dir.rstrip(os.sep)) + os.sep,     # site-packages
                      sysconfig.get_paths()["stdlib"] + os.sep]
        self._lib_files = None

    def rel(self, filename):
        """Path relative to the library's package, or None outside it."""
        return filename[len(self.lib_dir):] if filename.startswith(self.lib_dir) else None

    def short(self, filename):
        for root in self.roots:
            if filename.startswith(root):
                return filename[len(root):]
        return os.path.basename(filename)

    def by_suffix(self, tail):
        """A guard comment names its file by its last ~40 characters (a short path whole): the library's file."""
        tail = tail.lstrip(".")
        if self._lib_files is None:
            self._lib_files = [os.path.relpath(os.path.join(d, f), self.lib_dir)
                               for d, _, fs in os.walk(self.lib_dir) for f in fs if f.endswith(".py")]
        hits = [f for f in self._lib_files if (self.lib_dir + f).endswith(tail)]
        return hits[0] if len(hits) == 1 else None


class LineTracer:
    """Lines of the library's files executed while active (sys.settrace: this is CPython 3.11)."""

    def __init__(self, paths):
        self.paths, self.lines = paths, {}

    def _global(self, frame, event, arg):
        rel = self.paths.rel(frame.f_code.co_filename)
        if rel is None:
            return None
        seen = self.lines.setdefault(rel, set())
        seen.add(frame.f_lineno)

        def local(frame, event, arg):
            if event == "line":
                seen.add(frame.f_lineno)
            return local
        return local

    def __enter__(self):
        sys.settrace(self._global)
        return self

    def __exit__(self, *exc):
        sys.settrace(None)

    def ranges(self):
        """{file: "3-7,9,12-20"}: consecutive executed lines merged, nothing lost."""
        return {rel: merge_ranges(lines) for rel, lines in sorted(self.lines.items())}


def merge_ranges(lines):
    """"3-7,9,12-20" for {3, 4, 5, 6, 7, 9, 12, ..., 20}."""
    parts, run = [], None
    for n in sorted(lines):
        if run and n == run[1] + 1:
            run[1] = n
        else:
            run = [n, n]
            parts.append(run)
    return ",".join(f"{a}-{b}" if a != b else str(a) for a, b in parts)


class TracedLines:
    """The library's source positions Dynamo itself traced (symbolic_convert's `step`, one instruction at a
    time, inlined calls and resume functions included): the lines that really ran under compile. Eager line
    coverage overstates this (first-call initialisation, `if not is_torchdynamo_compiling()` branches, the
    rest of a frame Dynamo skipped) and cannot see a short-circuited `A and B`; instruction positions can."""

    def __init__(self, paths):
        self.paths, self.seen, self.codes = paths, collections.defaultdict(set), set()

    def __enter__(self):
        from torch._dynamo import symbolic_convert

        self._cls, self._step = symbolic_convert.InstructionTranslatorBase, symbolic_convert.InstructionTranslatorBase.step
        original, seen, codes, rel_of = self._step, self.seen, self.codes, self.paths.rel

        def step(tx):
            ip = tx.instruction_pointer
            if ip is not None:
                rel = rel_of(tx.f_code.co_filename)
                pos = tx.instructions[ip].positions
                if rel is not None and pos is not None and pos.lineno is not None:
                    seen[rel].add((pos.lineno, pos.col_offset, pos.end_lineno, pos.end_col_offset))
                    codes.add(tx.f_code)
            return original(tx)

        self._cls.step = step
        return self

    def __exit__(self, *exc):
        self._cls.step = self._step

    def result(self):
        """(traced, partial): {file: "ranges"} of traced lines, and {file: {line: [[col, end_col], ...]}} for
        lines where some instruction was not traced (the traced spans; end_col -1 = to a later line)."""
        every = collections.defaultdict(set)
        for code in self.codes:
            rel = self.paths.rel(code.co_filename)
            for inst in dis.get_instructions(code):
                pos = inst.positions
                if pos is not None and pos.lineno is not None:
                    every[rel].add((pos.lineno, pos.col_offset, pos.end_lineno, pos.end_col_offset))
        traced, partial = {}, {}
        for rel, spans in sorted(self.seen.items()):
            lines = {p[0] for p in spans}
            traced[rel] = merge_ranges(lines)
            for line in sorted(lines):
                done = {p for p in spans if p[0] == line}
                if {p for p in every[rel] if p[0] == line} - done:
                    partial.setdefault(rel, {})[str(line)] = sorted(
                        [p[1] if p[1] is not None else 0, p[3] if p[2] == line and p[3] is not None else -1]
                        for p in done)
        return traced, partial


_LOC = re.compile(r"Graph break(?: \(user stack suppressed due to duplicate graph break\))? in user code at (.+?):(\d+)")
_FRAME = re.compile(r'^\s*File "(.+?)", line (\d+), in (.+)$', re.M)
_RECOMPILE = re.compile(r"Recompiling function (\S+) in (.+?):(\d+)")
_GUARD_LINE = re.compile(r"^\s*- (\d+/\d+): (.*)$", re.M)
# `guard  # source line  # ...file.py:12 in fn`, maybe followed by a parenthesis: `(HINT: type Foo)` or
# `(HINT: guard on "k")` (a type check, a closure's variable: torch/_dynamo/guards.py's get_verbose_code_parts), or
# the torch frame that installed it, `(_dynamo/utils.py:4231 in run_node)`, for a guard on an `.item()`
_GUARD_AT = re.compile(r"#\s*(\S+?):(\d+) in (\S+?)(?:\s+\((.*)\))?\s*$")


class DynamoLog(logging.Handler):
    """Graph breaks and recompiles from the artifact logs, already shortened for the results file."""

    def __init__(self, paths):
        super().__init__(logging.DEBUG)
        self.paths, self.phase = paths, None
        self.breaks, self.recompiles, self.warnings = {}, [], []

    def emit(self, record):
        try:
            msg = record.getMessage()
            if record.name.endswith("__graph_breaks"):
                self._break(msg)
            elif record.name.endswith("__recompiles"):
                self._recompile(msg)
            elif record.levelno >= logging.WARNING and len(self.warnings) < 10:
                self.warnings.append(msg.splitlines()[0][:300] if msg else "")
        except Exception as exc:     # a parse slip must not lose the whole record
            self.warnings.append("zoo parse error: " + short_error(exc))

    def _break(self, msg):
        m = _LOC.search(msg)
        loc = [self.paths.short(m.group(1)), int(m.group(2))] if m else None
        reason, _, traceback = msg.split("Graph Break Reason:", 1)[-1].partition("User code traceback:")
        lines = reason.splitlines()
        gb_types = [lines[i].strip() for i in range(len(lines) - 1) if lines[i + 1].startswith("  Explanation:")]
        context = re.search(r"Developer debug context:\s*(.*)", reason)
        lib_frames = [(self.paths.rel(f), int(n), fn) for f, n, fn in _FRAME.findall(traceback) if self.paths.rel(f)]
        if not lib_frames and m and self.paths.rel(m.group(1)):
            lib_frames = [(self.paths.rel(m.group(1)), int(m.group(2)), None)]   # duplicates carry no traceback
        site = lib_frames[-1] if lib_frames else (None, None, None)
        skipped = "falling back to eager" in msg or "skip tracing the frame" in msg
        key = (site[0], site[1], tuple(gb_types), skipped)
        rec = self.breaks.get(key)
        if rec is None:
            rec = self.breaks[key] = {
                "file": site[0], "line": site[1], "fn": site[2], "gb_types": gb_types,
                "frame_skipped": skipped, "loc": loc,
                "context": context.group(1).strip()[:200] if context else None,
                # the library's callers, outermost first (file:line), to see how the site is reached
                "stack": [f"{f}:{n}" for f, n, _ in lib_frames[-6:-1]],
                "count": 0, "phases": [],
            }
        if rec["fn"] is None and site[2]:
            rec["fn"] = site[2]
        rec["count"] += 1
        if self.phase not in rec["phases"]:
            rec["phases"].append(self.phase)

    def _recompile(self, msg):
        m = _RECOMPILE.search(msg)
        failures = []
        for entry, text in _GUARD_LINE.findall(msg):
            parts = [p.strip() for p in text.split("  # ")]
            guard = parts[0]
            at = _GUARD_AT.search(text)
            failures.append({
                "entry": entry, "guard": guard[:300],
                "source": parts[1][:200] if len(parts) > 2 else None,   # the line that installed the guard
                "file": self.paths.by_suffix(at.group(1)) if at else None,
                "line": int(at.group(2)) if at else None,
                **({"hint": at.group(4)[6:126]} if at and (at.group(4) or "").startswith("HINT: ") else {}),
            })
        self.recompiles.append({
            "fn": m.group(1) if m else None,
            "file": (self.paths.rel(m.group(2)) or self.paths.short(m.group(2))) if m else None,
            "line": int(m.group(3)) if m else None,
            "phase": self.phase, "guard_failures": failures,
        })


def scalar_loss(out):
    """The model's own loss if it computed one, else the sum of the means of its float outputs."""
    import torch

    loss = getattr(out, "loss", None)
    if isinstance(loss, torch.Tensor):
        return loss
    tensors = []

    def walk(x):
        if isinstance(x, torch.Tensor):
            if x.is_floating_point() and x.requires_grad:
                tensors.append(x)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)
        elif hasattr(x, "to_tuple"):             # transformers' and diffusers' ModelOutput
            walk(x.to_tuple())
    walk(out)
    if not tensors:
        raise ValueError("no differentiable output")
    return sum(t.float().mean() for t in tensors)


def worker(library, model, cls_name, mode):
    os.nice(10)                      # others share this machine
    start = time.time()
    rec = {"model": model, "mode": mode, "cls": cls_name}

    def finish(status, **extra):
        rec.update(status=status, **extra, seconds=round(time.time() - start, 1))
        print(RESULT_MARK + json.dumps(rec, separators=(",", ":")), flush=True)

    import torch
    import torch._dynamo

    torch.manual_seed(0)
    lib = adapter(library)
    paths = Paths(lib.PACKAGE)
    try:
        case = lib.build(model, cls_name, mode)
    except Skip as exc:
        return finish("skipped", reason=str(exc))
    except Exception as exc:     # noqa: BLE001 - a model that does not build is a result, not a crash
        return finish("skipped", reason="build: " + short_error(exc))
    return run_case(case, mode, paths, rec, finish)


def run_case(case: Case, mode, paths, rec, finish):
    """Eager (line-traced) then compiled at both shapes; the record's fields. Shared by every library."""
    import torch

    rec["params"] = case.params
    rec.update(case.extra)

    def step(fn, call):
        args, kwargs = call
        if mode == "eval":
            with torch.no_grad():
                fn(*args, **kwargs)
        else:
            scalar_loss(fn(*args, **kwargs)).backward()

    if case.module is not None:
        case.module.train(mode == "train")

    # Eager first, traced: the lines that ran, and proof the tiny model works before Dynamo sees it.
    def eager():
        tracer = LineTracer(paths)
        with tracer:
            for call in case.calls:
                step(case.fn, call)
        return tracer.ranges()
    try:
        rec["executed"] = eager()
    except Exception as exc:
        retry = case.fallback(exc) if case.fallback else None
        if retry is None:
            return finish("eager_error", error=short_error(exc))
        case.calls, rec["dropped"] = retry
        try:
            rec["executed"] = eager()
        except Exception as exc:
            return finish("eager_error", error=short_error(exc))
    rec["inputs"], rec["shapes2"] = (shapes(call) for call in case.calls)
    if case.module is not None:
        case.module.zero_grad(set_to_none=True)
    if case.reset is not None:
        case.reset()

    log = DynamoLog(paths)
    graphs = []

    def backend(gm, example_inputs):     # = backend="eager", plus a graph count
        graphs[-1] += 1
        return gm.forward

    torch._logging.set_logs(graph_breaks=True, recompiles=True)
    dynamo_logger = logging.getLogger("torch._dynamo")    # torch loggers don't propagate: attach here
    for h in list(dynamo_logger.handlers):
        dynamo_logger.removeHandler(h)
    dynamo_logger.addHandler(log)
    torch._dynamo.reset()
    torch._dynamo.utils.reset_graph_break_dup_checker()
    compiled = torch.compile(case.fn, backend=backend)
    status, error = "ok", None
    with TracedLines(paths) as traced:
        for i, call in enumerate(case.calls):
            log.phase = f"shape{i + 1}"
            graphs.append(0)
            try:
                step(compiled, call)
            except Exception as exc:
                status, error = "compile_error", short_error(exc)
                break
    dynamo_logger.removeHandler(log)
    rec["traced"], rec["partial"] = traced.result()
    rec.update(graphs=graphs, breaks=list(log.breaks.values()), recompiles=log.recompiles,
               warnings=log.warnings)
    return finish(status, **({"error": error} if error else {}))


def shapes(call):
    """{input: shape} of one call's tensors (positional ones as arg0, arg1, ...; lists of tensors as lists)."""
    import torch

    def shape(v):
        if isinstance(v, torch.Tensor):
            return list(v.shape)
        if isinstance(v, (list, tuple)) and v and all(isinstance(x, torch.Tensor) for x in v):
            return [list(x.shape) for x in v]
        return None
    args, kwargs = call
    named = {**{f"arg{i}": a for i, a in enumerate(args)}, **kwargs}
    return {k: s for k, v in named.items() if (s := shape(v)) is not None}


if __name__ == "__main__":
    main()
