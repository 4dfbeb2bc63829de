"""Development zoo: where real TorchDynamo breaks the graph and recompiles in `transformers` model code.

For every model type of the installed transformers that builds from a small config, one subprocess per
(model, mode) builds the model on CPU with random weights, runs it eagerly under a line tracer (which
lines of transformers executed), then under `torch.compile(backend=<eager>)` at two input shapes, and
records every graph break and recompile from Dynamo's `graph_breaks` / `recompiles` artifact logs
(the recipe of dynlint/compiler/capture.py). Results: one JSON line per model x mode in
bench/zoo/results/transformers-<version>.jsonl, appended as each finishes; a re-run skips what is there.

    python bench/zoo/collect.py                       # everything not yet in the results file
    python bench/zoo/collect.py --models bert,gpt2 --limit 5 --timeout 120 --jobs 2

This is a bench script: it needs torch and transformers (pip install transformers==5.4.0), nothing is
downloaded (HF_HUB_OFFLINE=1, weights are random). See bench/zoo/README.md for the record's fields.
"""
import argparse
import collections
import concurrent.futures
import dis
import inspect
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
RESULT_MARK = "ZOO_RESULT "          # the child's one result line on stdout (models may print too)
MODES = ("eval", "train")

# Small-config values, after transformers' own model testers; only the attributes a config has are set.
# Sizes are multiples of 16 bytes in float32 (grouped_mm in the MoE layers refuses 37).
SMALL = {
    "vocab_size": 99, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "intermediate_size": 64, "max_position_embeddings": 64, "head_dim": 8,
    "type_vocab_size": 2,
    # encoder-decoder (bart, t5, ...)
    "d_model": 32, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4,
    "decoder_attention_heads": 4, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64, "num_layers": 2,
    "num_decoder_layers": 2, "num_heads": 4, "d_ff": 64, "d_kv": 8,
    # gpt2-style names
    "n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 64, "n_ctx": 64,
    # mixture of experts: few experts so the tiny model stays tiny
    "num_experts": 4, "num_local_experts": 4, "n_routed_experts": 4, "num_experts_per_tok": 2,
    "moe_intermediate_size": 16, "shared_expert_intermediate_size": 16,
    # vision
    "image_size": 32, "patch_size": 4, "num_channels": 3,
    # audio (wav2vec2-style conv feature extractor)
    "conv_dim": [32, 32, 32], "conv_stride": [4, 4, 4], "conv_kernel": [8, 8, 8],
    "num_conv_pos_embeddings": 16, "num_conv_pos_embedding_groups": 2,
}
TEXT_SHAPES = ((2, 8), (2, 12))      # (batch, seq): the second shape shows the recompiles
VISION_BATCHES = (2, 3)              # image models change the batch (a fixed 32x32 image)
AUDIO_SHAPES = ((2, 1024), (2, 1536))
# Inputs this script can build; a forward that requires anything else is skipped.
# Special token ids that no longer fit the small vocabulary are moved into it.
TOKEN_IDS = {"pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2, "decoder_start_token_id": 0,
             "sep_token_id": 2, "cls_token_id": 0, "image_token_id": 98, "image_token_index": 98}
MAX_PARAMS = 20_000_000              # a sub-config we failed to shrink: skip, never fill the memory
BUILDABLE = {"input_ids", "attention_mask", "decoder_input_ids", "pixel_values", "input_values", "labels"}


# ---------------------------------------------------------------------------------------------------
# Parent: enumerate, schedule, write results
# ---------------------------------------------------------------------------------------------------
def model_classes():
    """{model_type: [class names]}: the causal-LM head where there is one, else the base model, else any head;
    for an encoder-decoder model type whose causal-LM head is its decoder alone (BartForCausalLM), also the
    base model, which runs the encoder-decoder path (cross-attention, its caches) that head never does."""
    from transformers.models.auto import configuration_auto, modeling_auto

    mappings = [modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, modeling_auto.MODEL_MAPPING_NAMES]
    mappings += [getattr(modeling_auto, n) for n in sorted(dir(modeling_auto))
                 if n.startswith("MODEL_FOR_") and n.endswith("_MAPPING_NAMES")]
    chosen = {}
    for model_type in sorted(configuration_auto.CONFIG_MAPPING_NAMES):
        for mapping in mappings:
            name = mapping.get(model_type)
            if name:
                chosen[model_type] = [name if isinstance(name, str) else name[0]]
                break
        else:
            chosen[model_type] = [None]
        base = modeling_auto.MODEL_MAPPING_NAMES.get(model_type)
        base = base if isinstance(base, str) or base is None else base[0]
        if chosen[model_type][0] in modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.values() and base and \
                base != chosen[model_type][0] and _encoder_decoder(model_type):
            chosen[model_type].append(base)
    return chosen


def _encoder_decoder(model_type) -> bool:
    from transformers.models.auto import configuration_auto

    try:
        config_cls = configuration_auto.CONFIG_MAPPING[model_type]
    except KeyError:
        return False
    try:
        return bool(getattr(config_cls(), "is_encoder_decoder", False))
    except Exception:                # noqa: BLE001 - a default config that does not build: its signature's default
        param = inspect.signature(config_cls.__init__).parameters.get("is_encoder_decoder")
        return bool(param is not None and param.default is True)


def versions():
    import torch
    import transformers

    return {"torch": torch.__version__, "transformers": transformers.__version__,
            "python": sys.version.split()[0]}


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


def run_one(model_type, cls_name, mode, timeout):
    start = time.time()
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", model_type, cls_name, mode]
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
        return {"model": model_type, "mode": mode, "cls": cls_name, "status": "timeout",
                "error": f"no result within {timeout} s", "seconds": round(time.time() - start, 1)}
    finally:
        _running.pop(proc.pid, None)
    for line in reversed(out.splitlines()):
        if line.startswith(RESULT_MARK):
            return json.loads(line[len(RESULT_MARK):])
    tail = [l for l in err.splitlines() if l.strip()][-3:]
    return {"model": model_type, "mode": mode, "cls": cls_name, "status": "crash",
            "error": f"rc {proc.returncode}: " + " | ".join(l[:200] for l in tail),
            "seconds": round(time.time() - start, 1)}


def stop_children(*_):
    _stopping.set()
    for pid in list(_running):
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", help="comma-separated model types (default: all)")
    ap.add_argument("--limit", type=int, help="at most this many model types not yet done")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per model x mode")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", help="results file (default: bench/zoo/results/transformers-<version>.jsonl)")
    ap.add_argument("--worker", nargs=3, metavar=("MODEL", "CLASS", "MODE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(*args.worker)

    header = versions()
    path = args.out or os.path.join(HERE, "results", f"transformers-{header['transformers']}.jsonl")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    done = read_done(path, header)
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(json.dumps({"header": True, **header}) + "\n")

    classes = model_classes()
    wanted = args.models.split(",") if args.models else sorted(classes)
    unknown = [None]                 # an unknown model type: one job, recorded as skipped
    pending = [(m, mode, c) for m in wanted for c in classes.get(m, unknown) for mode in MODES
               if (m, mode, c) not in done]
    todo_models = list(dict.fromkeys(m for m, _, _ in pending))
    if args.limit is not None:
        todo_models = todo_models[:args.limit]
    jobs = [j for j in pending if j[0] in todo_models]
    print(f"{len(done)} done, {len(jobs)} to run ({len(todo_models)} models)", flush=True)

    signal.signal(signal.SIGTERM, stop_children)
    signal.signal(signal.SIGINT, stop_children)
    lock = threading.Lock()

    def task(model_type, mode, cls_name):
        if _stopping.is_set():
            return
        if cls_name is None:
            rec = {"model": model_type, "mode": mode, "cls": None, "status": "skipped",
                   "reason": "no model class" if model_type in classes else "unknown model type"}
        else:
            rec = run_one(model_type, cls_name, mode, args.timeout)
        if _stopping.is_set():       # a child killed by the stop is not a result
            return
        with lock:
            with open(path, "a") as f:
                f.write(json.dumps(rec, separators=(",", ":")) + "\n")
            print(f"{model_type:32} {mode:5} {rec['status']:13} {rec.get('seconds', 0):6}s "
                  f"breaks={len(rec.get('breaks', []))} recompiles={len(rec.get('recompiles', []))} "
                  f"{rec.get('reason') or rec.get('error') or ''}"[:220], flush=True)

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for fut in [pool.submit(task, *job) for job in jobs]:
            fut.result()


# ---------------------------------------------------------------------------------------------------
# Worker: one (model, mode) in its own process
# ---------------------------------------------------------------------------------------------------
def _short_error(exc):
    text = f"{type(exc).__name__}: {exc}".strip()
    return text.splitlines()[0][:300]


class Paths:
    """Turns absolute file names into short, machine-independent ones."""

    def __init__(self):
        import transformers

        self.tf_dir = os.path.dirname(transformers.__file__) + os.sep
        self.roots = [os.path.dirname(self.tf_dir.rstrip(os.sep)) + os.sep,     # site-packages
                      sysconfig.get_paths()["stdlib"] + os.sep]
        self._tf_files = None

    def tf(self, filename):
        """Path relative to the transformers package, or None outside it."""
        return filename[len(self.tf_dir):] if filename.startswith(self.tf_dir) else None

    def short(self, filename):
        for root in self.roots:
            if filename.startswith(root):
                return filename[len(root):]
        return os.path.basename(filename)

    def tf_by_suffix(self, tail):
        """A guard comment names its file by the last ~40 characters only: find the transformers file."""
        tail = tail.lstrip(".")
        if self._tf_files is None:
            self._tf_files = [os.path.relpath(os.path.join(d, f), self.tf_dir)
                              for d, _, fs in os.walk(self.tf_dir) for f in fs if f.endswith(".py")]
        hits = [f for f in self._tf_files if ("transformers/" + f).endswith(tail)]
        return hits[0] if len(hits) == 1 else None


class LineTracer:
    """Lines of transformers files executed while active (sys.settrace: this is CPython 3.11)."""

    def __init__(self, paths):
        self.paths, self.lines = paths, {}

    def _global(self, frame, event, arg):
        rel = self.paths.tf(frame.f_code.co_filename)
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
    """The transformers source positions Dynamo itself traced (symbolic_convert's `step`, one instruction at a
    time, inlined calls and resume functions included): the lines that really ran under compile. Eager line
    coverage overstates this (first-call initialisation, `if not is_torchdynamo_compiling()` branches, the
    rest of a frame Dynamo skipped) and cannot see a short-circuited `A and B`; instruction positions can."""

    def __init__(self, paths):
        self.paths, self.seen, self.codes = paths, collections.defaultdict(set), set()

    def __enter__(self):
        from torch._dynamo import symbolic_convert

        self._cls, self._step = symbolic_convert.InstructionTranslatorBase, symbolic_convert.InstructionTranslatorBase.step
        original, seen, codes, tf = self._step, self.seen, self.codes, self.paths.tf

        def step(tx):
            ip = tx.instruction_pointer
            if ip is not None:
                rel = tf(tx.f_code.co_filename)
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
            rel = self.paths.tf(code.co_filename)
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
_GUARD_AT = re.compile(r"#\s*(\S+?):(\d+) in (\S+)\s*$")


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
            self.warnings.append("zoo parse error: " + _short_error(exc))

    def _break(self, msg):
        m = _LOC.search(msg)
        loc = [self.paths.short(m.group(1)), int(m.group(2))] if m else None
        reason, _, traceback = msg.split("Graph Break Reason:", 1)[-1].partition("User code traceback:")
        lines = reason.splitlines()
        gb_types = [lines[i].strip() for i in range(len(lines) - 1) if lines[i + 1].startswith("  Explanation:")]
        context = re.search(r"Developer debug context:\s*(.*)", reason)
        tf_frames = [(self.paths.tf(f), int(n), fn) for f, n, fn in _FRAME.findall(traceback) if self.paths.tf(f)]
        if not tf_frames and m and self.paths.tf(m.group(1)):
            tf_frames = [(self.paths.tf(m.group(1)), int(m.group(2)), None)]   # duplicates carry no traceback
        site = tf_frames[-1] if tf_frames else (None, None, None)
        skipped = "falling back to eager" in msg or "skip tracing the frame" in msg
        key = (site[0], site[1], tuple(gb_types), skipped)
        rec = self.breaks.get(key)
        if rec is None:
            rec = self.breaks[key] = {
                "file": site[0], "line": site[1], "fn": site[2], "gb_types": gb_types,
                "frame_skipped": skipped, "loc": loc,
                "context": context.group(1).strip()[:200] if context else None,
                # the transformers callers, outermost first (file:line), to see how the site is reached
                "stack": [f"{f}:{n}" for f, n, _ in tf_frames[-6:-1]],
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
                "file": self.paths.tf_by_suffix(at.group(1)) if at else None,
                "line": int(at.group(2)) if at else None,
            })
        self.recompiles.append({
            "fn": m.group(1) if m else None,
            "file": (self.paths.tf(m.group(2)) or self.paths.short(m.group(2))) if m else None,
            "line": int(m.group(3)) if m else None,
            "phase": self.phase, "guard_failures": failures,
        })


def make_config(config_cls):
    """The config class built with the SMALL values its default instance (and sub-configs) has."""
    def small_kwargs(cls):
        default = cls()
        have = set(default.to_dict()) | set(vars(default))
        kwargs = {k: v for k, v in SMALL.items() if k in have}
        for k, v in TOKEN_IDS.items():
            old = getattr(default, k, None)
            if isinstance(old, int) and old >= SMALL["vocab_size"]:
                kwargs[k] = v
        for name in getattr(cls, "sub_configs", None) or {}:
            # The default instance holds the concrete sub-config (the class may be an AutoConfig).
            sub = getattr(default, name, None)
            if hasattr(sub, "to_dict") and hasattr(sub, "model_type"):
                try:
                    kwargs[name] = {"model_type": sub.model_type, **small_kwargs(type(sub))}
                except Exception:
                    pass             # keep the default sub-config; MAX_PARAMS guards the size
        return kwargs

    return config_cls(**small_kwargs(config_cls))


def forward_params(model):
    sig = inspect.signature(type(model).forward)
    params = {n: p for n, p in sig.parameters.items() if n != "self"
              and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    required = [n for n, p in params.items() if p.default is p.empty]
    return params, required


def make_inputs(model, config, params, shape_index, mode):
    """Inputs for one call, or raises ValueError(reason) when this model's inputs can't be built generically."""
    import torch

    gen = torch.Generator().manual_seed(shape_index)
    kw = {}
    text_cfg = getattr(config, "get_text_config", lambda: config)()
    vocab = getattr(text_cfg, "vocab_size", None) or 99
    if "input_ids" in params:
        b, s = TEXT_SHAPES[shape_index]
        kw["input_ids"] = torch.randint(3, min(vocab, 99), (b, s), generator=gen)
        if "attention_mask" in params:
            mask = torch.ones(b, s, dtype=torch.long)
            mask[1, -2:] = 0         # one padded row: the usual batch, and the mask code paths it takes
            kw["attention_mask"] = mask
        if "decoder_input_ids" in params and getattr(config, "is_encoder_decoder", False):
            kw["decoder_input_ids"] = torch.randint(3, min(vocab, 99), (b, s), generator=gen)
        if mode == "train" and "labels" in params and type(model).__name__.endswith("ForCausalLM"):
            kw["labels"] = kw["input_ids"].clone()
    if "pixel_values" in params:
        vis_cfg = getattr(config, "vision_config", None) or config
        size = getattr(vis_cfg, "image_size", 32)
        size = size[0] if isinstance(size, (list, tuple)) else size
        channels = getattr(vis_cfg, "num_channels", 3)
        b = TEXT_SHAPES[shape_index][0] if "input_ids" in kw else VISION_BATCHES[shape_index]
        kw["pixel_values"] = torch.randn(b, channels, size, size, generator=gen)
    if not kw and "input_values" in params:
        kw["input_values"] = torch.randn(*AUDIO_SHAPES[shape_index], generator=gen)
    if not kw:
        raise ValueError("no generic input: forward takes " + ",".join(list(params)[:6]))
    return kw


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
    walk(out.to_tuple() if hasattr(out, "to_tuple") else out)
    if not tensors:
        raise ValueError("no differentiable output")
    return sum(t.float().mean() for t in tensors)


def worker(model_type, cls_name, mode):
    os.nice(10)                      # others share this machine
    start = time.time()
    rec = {"model": model_type, "mode": mode, "cls": cls_name}

    def finish(status, **extra):
        rec.update(status=status, **extra, seconds=round(time.time() - start, 1))
        print(RESULT_MARK + json.dumps(rec, separators=(",", ":")), flush=True)

    import torch
    import torch._dynamo
    import transformers
    from transformers.models.auto import configuration_auto

    torch.manual_seed(0)
    paths = Paths()
    try:
        config_cls = getattr(transformers, configuration_auto.CONFIG_MAPPING_NAMES[model_type])
        model_cls = getattr(transformers, cls_name)
        config = make_config(config_cls)
    except Exception as exc:
        return finish("skipped", reason="config: " + _short_error(exc))
    try:
        with torch.device("meta"):
            n_params = sum(p.numel() for p in model_cls(config).parameters())
    except Exception as exc:
        return finish("skipped", reason="build: " + _short_error(exc))
    if n_params > MAX_PARAMS:
        return finish("skipped", reason=f"too large after shrinking: {n_params} parameters")
    try:
        model = model_cls(config).eval()
    except Exception as exc:
        return finish("skipped", reason="build: " + _short_error(exc))
    params, required = forward_params(model)
    missing = [n for n in required if n not in BUILDABLE]
    if missing:
        return finish("skipped", reason="needs input " + ",".join(missing))
    try:
        inputs = [make_inputs(model, config, params, i, mode) for i in range(2)]
    except ValueError as exc:
        return finish("skipped", reason=str(exc))
    rec["params"] = n_params

    def step(fn, kw):
        if mode == "eval":
            with torch.no_grad():
                fn(**kw)
        else:
            scalar_loss(fn(**kw)).backward()

    if mode == "train":
        model.train()
    # Eager first, traced: the lines that ran, and proof the tiny model works before Dynamo sees it.
    def eager():
        tracer = LineTracer(paths)
        with tracer:
            for kw in inputs:
                step(model, kw)
        return tracer.ranges()
    try:
        rec["executed"] = eager()
    except Exception as exc:
        if not ("pixel_values" in inputs[0] and "input_ids" in inputs[0]):
            return finish("eager_error", error=_short_error(exc))
        # Image-text models want image tokens placed in input_ids: fall back to their text-only path.
        for kw in inputs:
            kw.pop("pixel_values")
        rec["dropped"] = {"pixel_values": _short_error(exc)}
        try:
            rec["executed"] = eager()
        except Exception as exc:
            return finish("eager_error", error=_short_error(exc))
    rec["inputs"] = {k: list(v.shape) for k, v in inputs[0].items()}
    rec["shapes2"] = {k: list(v.shape) for k, v in inputs[1].items()}
    model.zero_grad(set_to_none=True)

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
    compiled = torch.compile(model, backend=backend)
    status, error = "ok", None
    with TracedLines(paths) as traced:
        for i, kw in enumerate(inputs):
            log.phase = f"shape{i + 1}"
            graphs.append(0)
            try:
                step(compiled, kw)
            except Exception as exc:
                status, error = "compile_error", _short_error(exc)
                break
    dynamo_logger.removeHandler(log)
    rec["traced"], rec["partial"] = traced.result()
    rec.update(graphs=graphs, breaks=list(log.breaks.values()), recompiles=log.recompiles,
               warnings=log.warnings)
    return finish(status, **({"error": error} if error else {}))


if __name__ == "__main__":
    main()
