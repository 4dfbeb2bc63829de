"""How many real graph breaks do dynlint's automatic fixes remove, and do they keep the outputs?

    python bench/fix_effect.py                           # safe fixes (`dynlint check --fix`)
    python bench/fix_effect.py --unsafe                  # safe and unsafe fixes (`--fix --unsafe-fixes`)
    python bench/fix_effect.py --write docs/accuracy.md  # (re)write the "Automatic fixes" section there

For every file of the labelled corpus (tests/corpus/, each a project of its own, as in bench/accuracy.py) and
for the example project (examples/, run through its `@dynlint.example` providers) the script

1. copies it to a temporary folder and applies the fixes there, exactly as `dynlint check --fix` would;
2. runs the original without compiling (`torch.compile` replaced by the identity) and records what every
   compiled callable returns: the reference outputs;
3. runs the original and the fixed copy under real Dynamo (eager backend, counted graphs, the graph_breaks log)
   and records the same outputs;
4. sorts every break line by cause -- the dynlint rule found on that line, else Dynamo's gb_type -- and counts
   how many of the breaks of each cause are gone, and whether any output differs from the reference (values
   within rtol 1e-5 / atol 1e-6, dtypes and shapes exactly, Python types exactly).

tests/test_fixes.py uses `run_file` and `compare` to prove each rule's FIX_EXAMPLES the same way.
"""
from __future__ import annotations

import argparse
import datetime
import importlib
import importlib.util
import math
import os
import shutil
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from dynlint import api
from dynlint.api import known_codes
from dynlint.compiler.harness import Run, compare, run_file, run_program
from dynlint.linter.config import load_config

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
EXAMPLES = ROOT / "examples"
ENTRY = "__dynlint_calls__"
SECTION = "## Automatic fixes"
CATEGORIES = (   # cause -> the rules whose findings name it
    ("data-dependent branch", frozenset({"DYN101", "DYN102", "DYN104"})),
    (".item() / Python scalar", frozenset({"DYN201", "DYN202", "DYN207"})),
    ("print / logging / warnings", frozenset({"DYN301", "DYN302", "DYN303"})),
    ("copy.deepcopy", frozenset({"DYN304"})),
)
TARGETED = tuple(name for name, _ in CATEGORIES)
GB_CATEGORY = {            # a break no rule predicted: sorted by Dynamo's gb_type
    "Data-dependent branching": "data-dependent branch",
    "Unsupported Tensor.item() call with capture_scalar_outputs=False": ".item() / Python scalar",
    "logging.Logger method not supported for non-export cases": "print / logging / warnings",
    "Attempted to copy.deepcopy a tensor": "copy.deepcopy",
    "copy.deepcopy()": "copy.deepcopy",
}


# ---- running code under (or without) Dynamo, recording what compiled callables return -------------------
def run_examples(root: Path, compiled: bool) -> Run:
    """Run every `@dynlint.example` provider of an example project (examples/dynlint_examples.py): each gives a
    callable and argument tuples; a callable not compiled already is compiled (as `dynlint check --verify` does)."""
    root = Path(root).resolve()

    def body():
        import torch

        packages = {p.name for p in root.iterdir() if (p / "__init__.py").is_file()}
        stale = [m for m in sys.modules if m == "dynlint_examples" or m.split(".")[0] in packages]
        for m in stale:
            del sys.modules[m]
        sys.path.insert(0, str(root))
        try:
            from dynlint.runtime_check.examples import is_example

            module = importlib.import_module("dynlint_examples")
            for name, provider in sorted(vars(module).items()):
                if not is_example(provider):
                    continue
                made = provider()
                fn, inputs = (made["fn"], made["inputs"]) if isinstance(made, dict) else made
                if not getattr(fn, "__dynlint_recorded__", False):
                    fn = torch.compile(fn)
                for args in inputs:
                    if isinstance(args, dict):
                        fn(**args)
                    else:
                        fn(*args) if isinstance(args, (tuple, list)) else fn(args)
        finally:
            sys.path.remove(str(root))
            for m in [m for m in sys.modules if m == "dynlint_examples" or m.split(".")[0] in packages]:
                del sys.modules[m]

    return run_program(body, lambda f: bool(f) and os.path.realpath(f).startswith(str(root) + os.sep), compiled)


def cause(codes: set, chains: List[Tuple[str, ...]]) -> str:
    for name, rule_codes in CATEGORIES:
        if codes & rule_codes:
            return name
    for chain in chains:
        for gb in chain:
            if gb in GB_CATEGORY:
                return GB_CATEGORY[gb]
    return "other"


def causes(lines: Dict[int, List[Tuple[str, ...]]], findings_by_line: Dict[int, set]) -> Counter:
    return Counter(cause(findings_by_line.get(line, set()), chains) for line, chains in lines.items())


def _findings(paths: Sequence[Path], root: Path) -> Dict[Tuple[str, int], set]:
    from dynlint.api import check
    from dynlint.linter.config import load_config

    config = load_config([str(root)], _known())
    config = config.with_(root=root.resolve())
    out: Dict[Tuple[str, int], set] = {}
    for f in check([str(p) for p in paths], config).findings:
        out.setdefault((str((root / f.path).resolve()), f.line), set()).add(f.code)
    return out


def _known():
    from dynlint.api import known_codes
    return known_codes()


def apply_fixes(root: Path, paths: Sequence[Path], unsafe: bool):
    """`dynlint check --fix [--unsafe-fixes]` on `paths` of the project at `root` (its pyproject.toml, if any)."""
    config = load_config([str(root)], known_codes()).with_(root=root.resolve())
    outcome = api.fix([str(p) for p in paths], config, unsafe=unsafe)
    failed = outcome.write()
    assert not failed and not outcome.problems, (failed, outcome.problems)
    return outcome


@dataclass
class Effect:
    name: str
    before: Counter                                  # break lines per cause, original code
    after: Counter                                   # ... after the fixes
    fixes: int
    graphs: Tuple[int, int]
    output_changes: List[str]
    original_vs_eager: List[str]                     # sanity: the unfixed compiled run against the reference
    errors: Tuple[Optional[str], Optional[str]] = (None, None)
    left: List[Tuple[str, int, str, str]] = field(default_factory=list)
    recompiles: Tuple[int, int] = (0, 0)    # targeted break lines left after
    #                                                  the fixes: (file, line, cause, code on that line)


def left_lines(lines: Dict[Tuple[str, int], List[Tuple[str, ...]]], findings: Dict[Tuple[str, int], set],
               root: Path) -> List[Tuple[str, int, str, str]]:
    """The break lines of a targeted cause still there: file (relative to root), line, cause, code."""
    out = []
    for (path, line), chains in sorted(lines.items()):
        c = cause(findings.get((path, line), set()), chains)
        if c in TARGETED:
            text = Path(path).read_text(encoding="utf-8").splitlines()[line - 1]
            out.append((os.path.relpath(path, root), line, c, text.split("  #")[0].strip()))
    return out


def _lines(run: Run) -> Dict[Tuple[str, int], List[Tuple[str, ...]]]:
    out: Dict[Tuple[str, int], List[Tuple[str, ...]]] = {}
    for b in run.breaks:
        if b.path:
            out.setdefault((os.path.realpath(b.path), b.line), []).append(tuple(b.gb_types))
    return out


def effect_of_file(path: Path, unsafe: bool, workdir: Path) -> Effect:
    d = workdir / path.stem
    d.mkdir(parents=True)
    copy = d / path.name
    shutil.copy2(path, copy)
    (d / "pyproject.toml").write_text("[tool.dynlint]\nregions = \"auto\"\n", encoding="utf-8")
    before_findings = _findings([copy], d)
    reference = run_file(copy, entry=ENTRY, compiled=False)
    original = run_file(copy, entry=ENTRY, compiled=True)
    outcome = apply_fixes(d, [copy], unsafe)
    after_findings = _findings([copy], d)
    fixed = run_file(copy, entry=ENTRY, compiled=True)
    per_line = lambda fs: {line: codes for (p, line), codes in fs.items()}    # noqa: E731 - one file
    here = {k: v for k, v in _lines(fixed).items() if k[0] == os.path.realpath(copy)}
    return Effect(path.name, causes(original.break_lines(str(copy)), per_line(before_findings)),
                  causes(fixed.break_lines(str(copy)), per_line(after_findings)), outcome.fixed,
                  (original.graphs, fixed.graphs), fix_changes(reference, original, fixed),
                  compare(reference, original), (original.error, fixed.error),
                  left_lines(here, {(os.path.realpath(p), n): c for (p, n), c in after_findings.items()}, d),
                  (original.recompiles, fixed.recompiles))


def fix_changes(reference: Run, original: Run, fixed: Run) -> List[str]:
    """Output changes due to the fixes: the fixed run differs from eager, and from the unfixed compiled run
    too (a compiled run that already differs from eager, e.g. through random numbers, is reported apart)."""
    return compare(original, fixed) if compare(reference, fixed) else []


def effect_of_examples(unsafe: bool, workdir: Path, source: Path = EXAMPLES) -> Effect:
    root = workdir / "examples"
    shutil.copytree(source, root, ignore=shutil.ignore_patterns(".dynlint_cache", "__pycache__"))
    files = sorted(root.rglob("*.py"))

    def by_file(run: Run, fs) -> Counter:
        out: Counter = Counter()
        for key, chains in _lines(run).items():
            out[cause(fs.get(key, set()), chains)] += 1
        return out

    before_findings = _findings(files, root)
    reference = run_examples(root, compiled=False)
    original = run_examples(root, compiled=True)
    outcome = apply_fixes(root, [root], unsafe)
    after_findings = _findings(files, root)
    fixed = run_examples(root, compiled=True)
    return Effect("examples/ (tinygpt)", by_file(original, before_findings), by_file(fixed, after_findings),
                  outcome.fixed, (original.graphs, fixed.graphs), fix_changes(reference, original, fixed),
                  compare(reference, original), (original.error, fixed.error),
                  [("examples/" + f, n, c, code) for f, n, c, code in left_lines(
                      {k: v for k, v in _lines(fixed).items() if k[0].startswith(str(root.resolve()) + os.sep)},
                      {(os.path.realpath(p), n): c for (p, n), c in after_findings.items()}, root)],
                  (original.recompiles, fixed.recompiles))


# ---- report ----------------------------------------------------------------------------------------------
def summarize(effects: List[Effect]) -> dict:
    before = sum((e.before for e in effects), Counter())
    after = sum((e.after for e in effects), Counter())
    rows = []
    for name in TARGETED + ("other",):
        b, a = before.get(name, 0), after.get(name, 0)
        rows.append((name, b, a, b - a))
    tb = sum(before.get(n, 0) for n in TARGETED)
    ta = sum(after.get(n, 0) for n in TARGETED)
    return {"rows": rows, "targeted_before": tb, "targeted_after": ta,
            "share": (tb - ta) / tb if tb else 1.0,
            "fixes": sum(e.fixes for e in effects),
            "graphs": (sum(e.graphs[0] for e in effects), sum(e.graphs[1] for e in effects)),
            "recompiles": (sum(e.recompiles[0] for e in effects), sum(e.recompiles[1] for e in effects)),
            "output_changes": [f"{e.name}: {c}" for e in effects for c in e.output_changes],
            "baseline_changes": [f"{e.name}: {c}" for e in effects for c in e.original_vs_eager],
            "left": [x for e in effects for x in e.left]}


LEFT_PROSE = (
    "Why none of them has a safe fix (each rewrite below changes, for some inputs, an exception type, a Python "
    "return type, a gradient, a dtype or an output shape): "
    "a `while` loop on a tensor runs a data-dependent number of times (a bounded loop with masks would change the "
    "length of what it stacks); "
    "value guards that raise (`if (x < 0).any(): raise ...`) only have the unsafe in-graph check (the fix keeps "
    "the `raise` for eager runs and asserts with `torch._assert_async` while compiling): compiled, a failing check "
    "raises RuntimeError whatever exception is written (ValueError in two of the three, which a caller's `except "
    "ValueError` then misses: `tests/test_fixes.py::test_unsafe_guard_fix_raises_another_exception_when_compiled`), "
    "and on CUDA it is a device-side assertion, asynchronous and fatal to the CUDA context; "
    "Python values that are returned (`any(t)`, `not t`, a returned `.item()`) stay Python values only with a "
    "host sync -- the unsafe fixes hand the caller a 0-d tensor (the output changes above); "
    "early returns whose returned values are not elementwise functions of one tensor with numbers get the unsafe "
    "`torch.where` fix, which always computes the path the return skipped: in `normalization.py` the weight "
    "standardisation it skips gives NaN (and a warning) for a filter with one element per output channel, and 0 * "
    "NaN makes the weight's gradient NaN where the original had none "
    "(`tests/test_fixes.py::test_unsafe_early_return_fix_gives_nan_gradients`); in `losses.py` the code after "
    "the return (a cross entropy over the positions selected by a mask) runs on an empty selection -- harmless "
    "there, not provably so in general; "
    "a branch that shifts a tensor by a float in one arm only (`den + 1e-12` in `host_sync_utils.py`) gets the "
    "unsafe `torch.where` fix where nothing shows the tensor to be floating (`den` is a parameter of `forward`): "
    "an integer tensor would come back as a float one from the path that left it alone; "
    "slice bounds read from tensors (`x[:n]` with `n` a tensor) make the output's shape depend on data; "
    "and Dynamo cannot deep-copy a module at all: the copy has to move out of the compiled function.")
TARGET_PROSE = (
    "The target of 70% of these breaks removed by safe fixes alone is {met} ({share}{unsafe}). The `torch.where` "
    "fixes (branch, conditional expression, early return) share one test of safety: elementwise arms of one "
    "tensor, one dtype whichever path is taken, and no tensor of the caller's (a parameter, an attribute, a view "
    "of one) handed back, stored or updated in place where `torch.where` gives a new tensor. A branch that scales "
    "or shifts by a float in one arm only keeps one dtype when the tensor is known to be floating: every value it "
    "gets is floating point whatever the inputs (a function that returns floating point for any input, or "
    "arithmetic with such a result: `emb * 0.5` in `diffusion_unet.py` is a "
    "safe fix: `emb` is what `timestep_embedding`, a function of the same file, returns -- `torch.cat` of "
    "`torch.cos` and `torch.sin` -- plus `cond`; `aux + 0.01` in `moe_routing.py` is one too: `aux` is the "
    "third element of what `self.router(x)` returns, read in `Router.forward` of the same file -- a float "
    "computed there, a new tensor the router does not keep). The float-shifting branch above is an unsafe fix "
    "for want of such evidence; the two early returns above were unsafe already.")
SHORT_PROSE = ("Reaching 70% with safe fixes alone would take {needed} more of the lines listed, each needing one of "
               "the rewrites just described (or, for the float-shifting branch, code that shows the tensor to be "
               "floating).")


def render(safe: dict, unsafe: Optional[dict], effects: List[Effect]) -> str:
    import torch

    def table(s: dict) -> List[str]:
        out = ["| cause (rule or gb_type at the break line) | break lines before | after | removed |",
               "|---|---|---|---|"]
        for name, b, a, r in s["rows"]:
            out.append(f"| {name} | {b} | {a} | {r} |")
        out.append(f"| **targeted causes together** | {s['targeted_before']} | {s['targeted_after']} | "
                   f"**{s['targeted_before'] - s['targeted_after']} ({s['share']:.0%})** |")
        return out

    lines = [
        SECTION, "",
        "<!-- Generated by `python bench/fix_effect.py --write docs/accuracy.md`; do not edit. -->", "",
        f"*Date:* {datetime.date.today().isoformat()} · *torch:* {torch.__version__} · "
        f"{len(effects) - 1} corpus files and the `examples/` project",
        "",
        "`dynlint check --fix` applied to a copy of every corpus file (and of `examples/`), both versions run "
        "under real Dynamo (eager backend) with the corpus entry points (the `@dynlint.example` providers for "
        "`examples/`), every break line sorted by its cause (the dynlint rule on that line, else Dynamo's "
        "gb_type), and every output of a compiled callable compared with the original code run without "
        "compiling (values within rtol 1e-5 / atol 1e-6, dtypes, shapes and Python types exactly). Method: "
        "`bench/fix_effect.py`; each fix's own proof is in `tests/test_fixes.py`.",
        "",
        f"**Safe fixes** (`--fix`): {safe['fixes']} fixes; graphs {safe['graphs'][0]} -> {safe['graphs'][1]}; "
        f"recompiles {safe['recompiles'][0]} -> {safe['recompiles'][1]}; "
        f"output changes: **{len(safe['output_changes'])}**.",
        "",
    ] + table(safe)
    if unsafe is not None:
        lines += ["", f"**Safe and unsafe fixes** (`--fix --unsafe-fixes`): {unsafe['fixes']} fixes; graphs "
                      f"{unsafe['graphs'][0]} -> {unsafe['graphs'][1]}; recompiles {unsafe['recompiles'][0]} -> "
                      f"{unsafe['recompiles'][1]}; output changes: "
                      f"**{len(unsafe['output_changes'])}**.", ""] + table(unsafe)
        if unsafe["output_changes"]:
            lines += ["", "Output changes with the unsafe fixes:", ""] + [f"- {c}" for c in unsafe["output_changes"]]
            lines += ["", "They are the intended type changes of those fixes (a returned Python number or bool becomes "
                          "a 0-d tensor of the same value)."]
    lines += ["", "Graphs count every FX graph Dynamo produced, recompiled ones included (a fix can let a resumed "
                  "function recompile where it used to break first).", ""]
    if safe["left"]:
        lines += [f"The {len(safe['left'])} break lines of these causes that the safe fixes leave:", ""]
        lines += [f"- `{f}:{n}` ({c}): `{code}`" for f, n, c, code in safe["left"]]
        lines += [""]
    lines += [LEFT_PROSE, "", TARGET_PROSE.format(
        share=f"{safe['share']:.0%}", met="met" if safe["share"] >= 0.7 else "not met",
        unsafe=f"; with the unsafe fixes it is {unsafe['share']:.0%}" if unsafe is not None else "")]
    needed = math.ceil(0.7 * safe["targeted_before"] - 1e-9) - (safe["targeted_before"] - safe["targeted_after"])
    if needed > 0:
        lines[-1] += " " + SHORT_PROSE.format(needed=needed)
    if safe["baseline_changes"]:
        lines += ["", "The original code compiled already differs from eager here (not caused by the fixes):", ""]
        lines += [f"- {c}" for c in safe["baseline_changes"]]
    return "\n".join(lines) + "\n"


def write_section(doc: Path, section: str) -> None:
    """Replace the section (up to the next `## ` heading) or append it."""
    text = doc.read_text(encoding="utf-8") if doc.exists() else ""
    start = text.find(SECTION + "\n")
    if start >= 0:
        nxt = text.find("\n## ", start + len(SECTION))
        text = text[:start] + section + ("\n" + text[nxt + 1:] if nxt >= 0 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    doc.write_text(text, encoding="utf-8")


def measure(unsafe: bool, corpus: Path = CORPUS, files: Sequence[Path] = ()) -> Tuple[dict, List[Effect]]:
    effects = []
    with tempfile.TemporaryDirectory(prefix="dynlint-fix-effect-") as tmp:
        for path in files or sorted(p for p in corpus.glob("*.py") if not p.name.startswith("_")):
            effects.append(effect_of_file(path, unsafe, Path(tmp) / ("u" if unsafe else "s")))
        if not files:
            effects.append(effect_of_examples(unsafe, Path(tmp) / ("ue" if unsafe else "se")))
    return summarize(effects), effects


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--unsafe", action="store_true", help="also measure --fix --unsafe-fixes")
    ap.add_argument("--write", type=Path, help="write the section into this markdown file (docs/accuracy.md)")
    ap.add_argument("files", nargs="*", type=Path, help="only these corpus files (no examples/)")
    args = ap.parse_args(argv)
    safe, effects = measure(False, files=args.files)
    unsafe = measure(True, files=args.files)[0] if args.unsafe or args.write else None
    for e in effects:
        print(f"{e.name:32s} fixes {e.fixes:2d}  graphs {e.graphs[0]:3d} -> {e.graphs[1]:3d}  "
              f"recompiles {e.recompiles[0]:2d} -> {e.recompiles[1]:2d}  "
              f"before {dict(e.before)}  after {dict(e.after)}"
              + (f"  OUTPUT CHANGES {e.output_changes}" if e.output_changes else "")
              + (f"  errors {e.errors}" if any(e.errors) else ""))
    section = render(safe, unsafe, effects)
    print(section)
    if args.write:
        write_section(args.write, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
