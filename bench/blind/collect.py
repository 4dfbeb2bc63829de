"""Run every probe's main() under real TorchDynamo (backend "eager") and record graph breaks and recompiles.

    python collect.py            # all probes -> labels.json
    python collect.py p02_nms    # only probes whose name starts with the given prefixes (merged into labels.json)
    DYNLINT_BLIND_SET=suite python collect.py   # another set: probes in suite/, labels in suite.labels.json
    python collect.py --relabel  # labels again from the raw logs the last run kept in .raw/

Each probe runs in a fresh subprocess (`python collect.py --one NAME OUT.json`).
Recipe copied from /work/shared/reference/gt_collect.py.
"""
import ast
import importlib
import importlib.util
import json
import logging
import os
import re
import subprocess
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
SET = os.environ.get("DYNLINT_BLIND_SET", "probes")
PROBES = os.path.join(HERE, SET)
LABELS = os.path.join(HERE, "labels.json" if SET == "probes" else SET + ".labels.json")

_LOC = re.compile(r"Graph break(?: \(user stack suppressed due to duplicate graph break\))? in user code at (.+?):(\d+)")
_FRAME = re.compile(r'^\s*File "(.+?)", line (\d+), in (.+)$', re.M)
_RECOMPILE = re.compile(r"Recompiling function (\S+) in (.+?):(\d+)")
_GUARD_LINE = re.compile(r"^\s*- (\d+/\d+): (.*)$", re.M)
_RESUME = re.compile(r"torch_dynamo_resume_in_(\w+?)_at_(\d+)$")


def list_probes():
    out = []
    for name in sorted(os.listdir(PROBES)):
        p = os.path.join(PROBES, name)
        if name.endswith(".py") and re.match(r"[a-z]\d+_", name):    # p01_..., t01_...: the probes
            out.append(name[:-3])
        elif os.path.isdir(p) and os.path.exists(os.path.join(p, "__init__.py")):
            out.append(name)
    return out


def probe_root(name):
    d = os.path.join(PROBES, name)
    return d if os.path.isdir(d) else d + ".py"


def probe_files(name):
    root = probe_root(name)
    if root.endswith(".py"):
        return [root]
    return sorted(os.path.join(root, f) for f in os.listdir(root) if f.endswith(".py"))


# ------------------------------------------------------------------------------------------------
# worker side
# ------------------------------------------------------------------------------------------------
def gb_types_in(reason):
    lines = reason.splitlines()
    return [lines[i].strip() for i in range(len(lines) - 1) if lines[i + 1].startswith("  Explanation:")]


class Collect(logging.Handler):
    def __init__(self, user_roots):
        super().__init__(logging.DEBUG)
        self.user_roots = [os.path.abspath(r) for r in user_roots]
        self.graph_breaks, self.recompiles, self.warnings = [], [], []

    def _is_user(self, filename):
        filename = os.path.abspath(filename)
        return any(filename == r or filename.startswith(r + os.sep) for r in self.user_roots)

    def emit(self, record):
        msg = record.getMessage()
        if record.name.endswith("__graph_breaks"):
            self.graph_breaks.append(self._parse_graph_break(msg))
        elif record.name.endswith("__recompiles"):
            m = _RECOMPILE.search(msg)
            self.recompiles.append({
                "fn": m.group(1) if m else None,
                "loc": (m.group(2), int(m.group(3))) if m else None,
                "guard_failures": [(a, b) for a, b in _GUARD_LINE.findall(msg)],
                "raw": msg,
            })
        elif record.levelno >= logging.WARNING:
            self.warnings.append(msg)

    def _parse_graph_break(self, msg):
        m = _LOC.search(msg)
        loc = (m.group(1), int(m.group(2))) if m else None
        reason, _, tb = msg.split("Graph Break Reason:", 1)[-1].partition("User code traceback:")
        frames = [(f, int(line)) for f, line, _ in _FRAME.findall(tb)]
        user = [fr for fr in frames if self._is_user(fr[0])]
        if not user and loc and self._is_user(loc[0]):
            user = [loc]
        return {
            "gb_types": gb_types_in(reason),
            "loc": loc,
            "user_loc": user[-1] if user else None,
            "user_stack": user,
            "frame_skipped": "falling back to eager" in msg or "skip tracing the frame" in msg,
            "duplicate": "user stack suppressed" in msg,
            "reason_head": reason.strip().splitlines()[:3],
        }

    def __enter__(self):
        import torch
        import torch._dynamo
        self._saved_env = os.environ.pop("TORCH_LOGS", None)
        torch._logging.set_logs(graph_breaks=True, recompiles=True)
        self._logger = logging.getLogger("torch._dynamo")
        self._muted = list(self._logger.handlers)
        for h in self._muted:
            self._logger.removeHandler(h)
        self._logger.addHandler(self)
        torch._dynamo.reset()
        reset_dups = getattr(torch._dynamo.utils, "reset_graph_break_dup_checker", None)
        if reset_dups:
            reset_dups()
        return self

    def __exit__(self, *exc):
        import torch
        self._logger.removeHandler(self)
        for h in self._muted:
            self._logger.addHandler(h)
        torch._logging.set_logs()
        return False


def patch_compile():
    """Force backend="eager" on every torch.compile call (decorator, function, model.compile())."""
    import torch
    orig = torch.compile

    def compile_eager(model=None, **kwargs):
        kwargs.pop("mode", None)
        kwargs.pop("options", None)
        kwargs["backend"] = "eager"
        if model is None:
            return lambda m: orig(m, **kwargs)
        return orig(model, **kwargs)

    torch.compile = compile_eager


def run_one(name, out_path):
    import torch
    torch.set_num_threads(1)
    sys.path.insert(0, PROBES)
    patch_compile()
    root = probe_root(name)
    result = {"probe": name, "ok": False, "error": None}
    with Collect([root]) as c:
        try:
            if root.endswith(".py"):
                mod = importlib.import_module(name)
            else:
                mod = importlib.import_module(name + ".run")
            mod.main()
            result["ok"] = True
        except Exception:
            result["error"] = traceback.format_exc()
    result["graph_breaks"] = c.graph_breaks
    result["recompiles"] = c.recompiles
    result["warnings"] = c.warnings
    with open(out_path, "w") as f:
        json.dump(result, f)


# ------------------------------------------------------------------------------------------------
# parent side: turn raw events into labelled sites
# ------------------------------------------------------------------------------------------------
def functions_of(path):
    """[(name, def_line, first_line_incl_decorators, end_line)] of every function in a file."""
    tree = ast.parse(open(path).read())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            out.append((node.name, node.lineno, first, node.end_lineno))
    return out


def resolve_fn(fn, file, line):
    """Map a compiled code object (maybe a resume function) to its user function def."""
    if not os.path.exists(file):
        return None
    funcs = functions_of(file)
    m = _RESUME.match(fn or "")
    if m:
        parent, at = m.group(1), int(m.group(2))
        cands = [f for f in funcs if f[0] == parent and f[2] <= at <= f[3]]
    else:
        cands = [f for f in funcs if f[0] == fn and f[2] <= line <= f[3]]
        if not cands:
            cands = [f for f in funcs if f[0] == fn]
    if not cands:
        return None
    cands.sort(key=lambda f: f[3] - f[2])
    name, def_line, first, end = cands[0]
    return {"fn": name, "def_line": def_line, "first_line": first, "end_line": end}


def match_file(fragment, files):
    """A guard comment names its file with the path cut to its last ~40 characters."""
    fragment = fragment.strip().lstrip(".")
    for f in files:
        if f.endswith(fragment) or f == fragment:
            return f
    return None


def parse_guard(text, files):
    """'x == 1  # source line  # file:LINE in fn' -> (guard, source, file, line). The location may be followed
    by a parenthesis, `(HINT: type tuple)` or `(HINT: guard on "k")` (a type check, a closure's variable:
    torch/_dynamo/guards.py's get_verbose_code_parts); the guard still has its line."""
    parts = text.split("  # ")
    guard = parts[0].strip()
    src, file, line = None, None, None
    if len(parts) >= 3:
        m = re.match(r"(.+?):(\d+) in (\S+?)(?:\s+\(.*\))?\s*$", parts[-1].strip())
        if m:
            src = "  # ".join(parts[1:-1]).strip()
            file = match_file(m.group(1), files)
            line = int(m.group(2))
    return guard, src, file, line


def label_one(name, raw):
    files = probe_files(name)
    rel = lambda p: os.path.relpath(p, PROBES)
    breaks = {}
    for gb in raw["graph_breaks"]:
        ul = gb["user_loc"]
        if not ul:
            continue
        key = (rel(ul[0]), ul[1])
        e = breaks.setdefault(key, {"file": key[0], "line": key[1], "gb_types": gb["gb_types"],
                                   "frame_skipped": False, "count": 0,
                                   "lib_loc": None if gb["loc"] and gb["loc"][0] in (ul[0],) else gb["loc"]})
        e["count"] += 1
        e["frame_skipped"] = e["frame_skipped"] or gb["frame_skipped"]
        if not e["gb_types"] and gb["gb_types"]:
            e["gb_types"] = gb["gb_types"]
    recs = {}
    for rc in raw["recompiles"]:
        fn_info = None
        if rc["loc"]:
            fn_info = resolve_fn(rc["fn"], rc["loc"][0], rc["loc"][1])
        fails = rc["guard_failures"] or [("?", "?")]
        for ident, text in fails[:1]:   # the newest cache entry's failure (first listed)
            guard, src, file, line = parse_guard(text, files)
            if file and line:
                key = (rel(file), line, False)
                e = recs.setdefault(key, {"file": key[0], "line": line, "no_line": False, "guard": guard,
                                          "source": src, "fn": rc["fn"], "count": 0})
            else:
                if rc["loc"] and os.path.abspath(rc["loc"][0]) not in files:
                    # compiled code object lives in a library (optimizer, functools.partial wrapper, ...)
                    key = (rc["loc"][0], rc["loc"][1], True)
                    e = recs.setdefault(key, {"file": None, "line": None, "no_line": True, "external": True,
                                              "external_loc": "%s:%d" % tuple(rc["loc"]),
                                              "guard": guard, "fn": rc["fn"], "count": 0})
                elif not fn_info or not rc["loc"] or not os.path.exists(rc["loc"][0]):
                    key = ("?", 0, True)
                    e = recs.setdefault(key, {"file": None, "line": None, "no_line": True, "guard": guard,
                                              "fn": rc["fn"], "count": 0})
                else:
                    key = (rel(rc["loc"][0]), fn_info["def_line"], True)
                    e = recs.setdefault(key, {"file": key[0], "line": fn_info["def_line"], "no_line": True,
                                              "guard": guard, "fn": rc["fn"],
                                              "fn_first_line": fn_info["first_line"],
                                              "fn_end_line": fn_info["end_line"], "count": 0})
            e["count"] += 1
            e.setdefault("all_guards", [])
            if guard not in e["all_guards"]:
                e["all_guards"].append(guard)
    return {
        "probe": name,
        "root": rel(probe_root(name)),
        "files": [rel(f) for f in files],
        "ok": raw["ok"],
        "error": raw["error"],
        "breaks": sorted(breaks.values(), key=lambda e: (e["file"], e["line"])),
        "recompiles": sorted(recs.values(), key=lambda e: (str(e["file"]), e["line"] or 0)),
        "warnings": [w[:400] for w in raw["warnings"]],
    }


def main(argv):
    if len(argv) >= 3 and argv[0] == "--one":
        run_one(argv[1], argv[2])
        return
    if argv == ["--relabel"]:           # labels again from the raw logs of the last run (.raw/SET/)
        tmp = os.path.join(HERE, ".raw", SET)
        labels = {n: label_one(n, json.load(open(os.path.join(tmp, n + ".json")))) for n in list_probes()}
        with open(LABELS, "w") as f:
            json.dump(labels, f, indent=1)
        return
    names = list_probes()
    if argv:
        names = [n for n in names if any(n.startswith(a) for a in argv)]
    labels = {}
    if argv and os.path.exists(LABELS):
        labels = json.load(open(LABELS))
    tmp = os.path.join(HERE, ".raw", SET)
    os.makedirs(tmp, exist_ok=True)
    env = dict(os.environ)
    env.pop("TORCH_LOGS", None)
    for name in names:
        out = os.path.join(tmp, name + ".json")
        if os.path.exists(out):
            os.remove(out)
        p = subprocess.run([sys.executable, __file__, "--one", name, out], env=env, cwd=HERE,
                           capture_output=True, text=True, timeout=900)
        if not os.path.exists(out):
            raw = {"ok": False, "error": "worker died rc=%s\n%s" % (p.returncode, p.stderr[-3000:]),
                   "graph_breaks": [], "recompiles": [], "warnings": []}
        else:
            raw = json.load(open(out))
        lab = label_one(name, raw)
        labels[name] = lab
        status = "OK " if lab["ok"] else "ERR"
        print(f"{status} {name:32s} breaks={len(lab['breaks']):2d} recompiles={len(lab['recompiles']):2d}"
              + ("" if lab["ok"] else "\n" + (lab["error"] or "")[-1500:]), flush=True)
    with open(LABELS, "w") as f:
        json.dump(labels, f, indent=1)
    nb = sum(len(l["breaks"]) for l in labels.values())
    nr = sum(len(l["recompiles"]) for l in labels.values())
    print(f"total: {len(labels)} probes, {nb} break sites, {nr} recompile sites -> {LABELS}")


if __name__ == "__main__":
    main(sys.argv[1:])
