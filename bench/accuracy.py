"""Score dynlint against TorchDynamo's own verdict on the labelled corpus (tests/corpus/).

    python bench/accuracy.py                      # print the scores
    python bench/accuracy.py --write docs/accuracy.md
    python bench/accuracy.py --labels             # show Dynamo's verdict line by line (for labelling)

Each corpus file is a realistic model file with an entry point `__dynlint_calls__()` that compiles and runs
everything in it. For every file the script

1. lints it (a single-file project, regions "auto") and collects dynlint's findings per line;
2. runs the entry point under real Dynamo (dynlint/compiler/harness.py: eager backend, graph_breaks/recompiles logs);
3. compares, line by line:
   * breaks: the lines where Dynamo reported a graph break (the innermost frame in the file) against the
     lines of dynlint's graph-break findings;
   * recompiles: each recompile points at the source lines of the guards that failed (one per cache entry;
     the recompiled function's first line for a guard with no source line) and at the line whose call
     triggered it; a recompile finding is right when its line is one of those, and a recompile is
     found when some recompile finding points at it.
   Lines inside a function Dynamo skipped as a whole (a break in a loop, `try` or `with`) get no verdict
   beyond the break that caused the skip: Dynamo never traced them. They are listed, not scored.

Inline markers in the corpus document the expected result: `# expect: DYN101, DYN302` (dynlint reports
exactly these codes on the line), `# ok` (a look-alike: no finding, and Dynamo agrees), `# miss: <why>`
(Dynamo breaks or recompiles here and dynlint does not report it: a known miss). tests/test_corpus.py checks
the static side against the markers; this script checks the markers against Dynamo.
"""
from __future__ import annotations

import argparse
import ast
import datetime
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

from dynlint.compiler import harness
from dynlint.testing import ENTRY, findings_by_line, parse_markers, static_findings

ROOT = Path(__file__).resolve().parent.parent
# The last five corpus files, scored once before any rule was tuned on them (see docs/accuracy.md).
HELD_OUT = {"files": ("transformer_lm.py", "diffusion_unet.py", "graph_nn.py", "rl_policy.py", "speech_ctc.py"),
            "breaks": 9, "breaks_found": 6, "false_positives": 0}
CORPUS = ROOT / "tests" / "corpus"
# Findings of these kinds are proven by tests/test_rule_proofs.py, not scored per line here.
UNSCORED_TAGS = ("hard-error", "deprecation", "not-compiled")


# ---- the static side (no torch needed) -------------------------------------------------------------------
def corpus_files(corpus: Path = CORPUS) -> List[Path]:
    return sorted(p for p in corpus.glob("*.py") if not p.name.startswith("_"))


# ---- the dynamic side -----------------------------------------------------------------------------------
def function_spans(path: Path) -> Dict[str, List[Tuple[int, int]]]:
    """function name -> [(first body line, last line)] (several when the name is reused)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    spans: Dict[str, List[Tuple[int, int]]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            spans.setdefault(node.name, []).append((node.body[0].lineno, node.end_lineno or node.lineno))
    return spans


_GUARDED = [re.compile(r"\bself\.(\w+)"), re.compile(r"G\['(\w+)'\]"),
            re.compile(r"^\s*(?:not\s+|len\()?([A-Za-z_]\w*)\b(?!\s*\()")]
_MUTATORS = {"append", "extend", "insert", "pop", "popleft", "appendleft", "update", "setdefault", "add", "clear",
             "remove", "discard", "popitem"}


def generalising(recompiles, fs=None) -> list:
    """Recompiles that are automatic dynamic shapes doing their job: the first size or stride mismatch of a
    function, when no other size mismatch of that function follows (with `dynamic=False`, or when the size
    drives Python control flow, they keep coming and are counted). They happen once per function whatever
    the code does, so they are reported, not scored."""
    shape = re.compile(r"tensor '.*' (size|stride) mismatch")
    by_function: Dict[str, list] = {}
    for rc in recompiles:
        if shape.search(rc.reason):
            by_function.setdefault(rc.function, []).append(rc)
    out = [rcs[0] for rcs in by_function.values() if len(rcs) == 1]
    if fs is not None:
        fs.generalisations = len(out)
    return out


def mutation_lines(path: Path, function: str, guard: str) -> Set[int]:
    """Lines of `function` that change the value a failed guard checked (`self.steps += 1` for the guard
    `self.steps == 3`, `HISTORY.append(x)` for `len(G['HISTORY']) == 2`): the statements that made it fail."""
    names = {m.group(1) for rx in _GUARDED for m in [rx.search(guard)] if m} - {"self", "G", "tensor", "not"}
    if not names:
        return set()

    def refers(node) -> bool:
        if isinstance(node, ast.Subscript):
            node = node.value
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return node.attr in names
        return isinstance(node, ast.Name) and node.id in names

    out: Set[int] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if ".training" in guard:
        # `model.train()` / `model.eval()` anywhere flip the flag the guard checks
        out |= {n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                and n.func.attr in ("train", "eval")}
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name != function:
            continue
        for node in ast.walk(fn):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
                targets = [node.func.value]
            if any(refers(t) for t in targets):
                out.add(node.lineno)
    return out


@dataclass
class FileScore:
    path: str
    break_tp: Set[int] = field(default_factory=set)
    break_fp: Set[int] = field(default_factory=set)
    break_fn: Set[int] = field(default_factory=set)
    recompile_tp: Set[int] = field(default_factory=set)       # finding lines that point at a recompile
    recompile_fp: Set[int] = field(default_factory=set)
    recompiles_found: int = 0                                 # distinct recompile sites explained by a finding
    recompiles_via_break: int = 0                             # ... of which by a graph-break finding
    generalisations: int = 0                                  # first size mismatch -> dynamic (not scored)
    recompiles_missed: List[str] = field(default_factory=list)
    unverifiable: Set[int] = field(default_factory=set)       # findings in code Dynamo never traced
    marker_disagreements: List[str] = field(default_factory=list)
    error: str = ""
    details: Dict[int, str] = field(default_factory=dict)     # line -> what Dynamo said


def score_file(path: Path, observe=None) -> FileScore:
    from dynlint.linter.rule import REGISTRY

    observe = observe or harness.observe
    path = path.resolve()
    fs = FileScore(path=str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path))
    findings = static_findings(path)
    break_pred: Dict[int, Set[str]] = {}
    rec_pred: Dict[int, Set[str]] = {}
    for f in findings:
        rule = REGISTRY.get(f.code)
        if rule is None or any(t in rule.tags for t in UNSCORED_TAGS):
            continue
        (rec_pred if rule.recompiles else break_pred).setdefault(f.line, set()).add(f.code)

    obs = observe(str(path), entry=ENTRY)
    if obs.error is not None:
        fs.error = f"{type(obs.error).__name__}: {str(obs.error).splitlines()[0] if str(obs.error) else ''}"
    observed: Dict[int, List[Tuple[str, ...]]] = obs.break_lines(str(path))
    for line, chains in observed.items():
        fs.details[line] = " | ".join(" > ".join(c) for c in sorted(set(chains)))

    # code Dynamo never traced: the rest of a function whose frame it skipped
    spans = function_spans(path)
    skipped: Set[int] = set()
    for b in obs.breaks:
        if b.frame_skipped and b.path and Path(b.path).resolve() == path and b.function in spans:
            for start, end in spans[b.function]:
                if start <= b.line <= end:
                    skipped |= set(range(start, end + 1)) - {b.line}

    truth = set(observed)
    for line in break_pred:
        if line in truth:
            fs.break_tp.add(line)
        elif line in skipped:
            fs.unverifiable.add(line)
        else:
            fs.break_fp.add(line)
    fs.break_fn = truth - set(break_pred)

    pairs: List[Tuple[frozenset, object]] = []
    benign = {id(rc) for rc in generalising(obs.recompiles, fs)}
    for rc, ls, guards in zip(obs.recompiles, obs.recompile_lines(str(path)), obs.guard_lines(str(path))):
        if id(rc) in benign:
            continue
        ls = frozenset(set(ls) | (guards or set()) | mutation_lines(path, rc.function, rc.reason))
        if all(ls != seen for seen, _ in pairs):
            pairs.append((ls, rc))
    sites = [ls for ls, _ in pairs]
    for line in rec_pred:
        (fs.recompile_tp if any(line in s for s in sites) else fs.recompile_fp).add(line)
    for s, rc in pairs:
        if s & set(rec_pred):
            fs.recompiles_found += 1
        elif s & set(break_pred):
            # e.g. a clock or random value read at a graph break becomes a constant of the resumed graph
            fs.recompiles_found += 1
            fs.recompiles_via_break += 1
        else:
            fs.recompiles_missed.append(f"lines {sorted(s)}: {rc.reason}")
    for s in sites:
        for line in s:
            fs.details.setdefault(line, "recompile")

    # markers against Dynamo
    for line, (kind, codes, text) in sorted(parse_markers(path).items()):
        breaks_here = line in truth
        recompiles_here = any(line in s for s in sites)
        if kind == "expect":
            rec_codes = {c for c in codes if c in REGISTRY and REGISTRY[c].recompiles}
            brk_codes = {c for c in codes - rec_codes if c in REGISTRY and
                         not any(t in REGISTRY[c].tags for t in UNSCORED_TAGS)}
            if brk_codes and not breaks_here and line not in skipped:
                fs.marker_disagreements.append(f"{line}: expect {sorted(brk_codes)} but Dynamo did not break")
            if rec_codes and not recompiles_here:
                fs.marker_disagreements.append(f"{line}: expect {sorted(rec_codes)} but no recompile points here")
        elif kind == "ok" and breaks_here:
            fs.marker_disagreements.append(f"{line}: marked ok but Dynamo reports {fs.details.get(line)}")
        elif kind == "miss" and not (breaks_here or recompiles_here):
            fs.marker_disagreements.append(f"{line}: marked miss but Dynamo reports nothing")
    return fs


def _ratio(a: int, b: int) -> float:
    return a / b if b else 1.0


def summarize(scores: List[FileScore]) -> dict:
    tp = sum(len(s.break_tp) for s in scores)
    fp = sum(len(s.break_fp) for s in scores)
    fn = sum(len(s.break_fn) for s in scores)
    rtp = sum(len(s.recompile_tp) for s in scores)
    rfp = sum(len(s.recompile_fp) for s in scores)
    rfound = sum(s.recompiles_found for s in scores)
    rvia = sum(s.recompiles_via_break for s in scores)
    rmiss = sum(len(s.recompiles_missed) for s in scores)
    return {
        "files": len(scores),
        "breaks": {"tp": tp, "fp": fp, "fn": fn, "precision": _ratio(tp, tp + fp), "recall": _ratio(tp, tp + fn)},
        "recompiles": {"tp": rtp, "fp": rfp, "found": rfound, "via_break": rvia, "missed": rmiss,
                       "precision": _ratio(rtp, rtp + rfp), "recall": _ratio(rfound, rfound + rmiss)},
        "unverifiable": sum(len(s.unverifiable) for s in scores),
        "generalisations": sum(s.generalisations for s in scores),
        "errors": [f"{s.path}: {s.error}" for s in scores if s.error],
        "marker_disagreements": [f"{s.path}:{d}" for s in scores for d in s.marker_disagreements],
    }


def problems(scores: List[FileScore]) -> List[str]:
    out = []
    for s in scores:
        name = Path(s.path).name
        out += [f"`{name}:{ln}` false positive (Dynamo did not break)" for ln in sorted(s.break_fp)]
        out += [f"`{name}:{ln}` missed break: {s.details.get(ln, '')}" for ln in sorted(s.break_fn)]
        out += [f"`{name}:{ln}` recompile finding with no recompile" for ln in sorted(s.recompile_fp)]
        out += [f"`{name}` missed recompile, {m}" for m in s.recompiles_missed]
    return out


def render_markdown(scores: List[FileScore], summary: dict, others: List[dict] = ()) -> str:
    import torch

    b, r = summary["breaks"], summary["recompiles"]
    lines = [
        "# dynlint accuracy",
        "",
        "## The labelled corpus (`bench/accuracy.py`)",
        "",
        "<!-- Generated by `python bench/accuracy.py --write docs/accuracy.md`; do not edit. -->",
        "",
        f"*Date:* {datetime.date.today().isoformat()} · *torch:* {torch.__version__} · "
        f"*Python:* {sys.version.split()[0]} · *corpus:* {summary['files']} files in `tests/corpus/`",
        "",
        "Ground truth is TorchDynamo itself: every corpus file's `__dynlint_calls__()` is run under "
        "`torch.compile` (eager backend, default Dynamo config) and the `graph_breaks` / `recompiles` logs "
        "give, per line, where Dynamo broke the graph and which lines a recompile points at (the failed "
        "guard's source line and the triggering call). dynlint's findings are compared line by line "
        "(method: `bench/accuracy.py`).",
        "",
        "| | predicted & observed | predicted only | observed only | precision | recall |",
        "|---|---|---|---|---|---|",
        f"| graph breaks (lines) | {b['tp']} | {b['fp']} | {b['fn']} | **{b['precision']:.3f}** | "
        f"**{b['recall']:.3f}** |",
        f"| recompiles | {r['tp']} finding lines / {r['found']} recompile sites | {r['fp']} | {r['missed']} "
        f"sites | **{r['precision']:.3f}** | **{r['recall']:.3f}** |",
        "",
        f"A recompile site counts as found when a finding sits on one of its lines; {r['via_break']} of the "
        f"{r['found']} found sites are explained by a graph-break finding rather than a recompile rule (a "
        f"clock or random value read at a break becomes a constant of the resumed graph and is guarded).",
        "",
        f"Not scored: {summary['generalisations']} recompiles that are automatic dynamic shapes "
        f"generalising a function after its first new input size (one per function, whatever the code).",
        "",
        f"Findings in code Dynamo never traced (the rest of a function it skipped after a break in a loop, "
        f"`try` or `with`): {summary['unverifiable']} lines, not scored.",
        "",
        "## How the corpus was made",
        "",
        "The corpus was written together with the rules: most files were labelled with Dynamo while the "
        "rules were being developed, so their figures above are not an independent test. Five files were "
        "written last and scored once before any rule was adjusted to them "
        f"({', '.join(f'`{n}`' for n in HELD_OUT['files'])}): dynlint then found "
        f"{HELD_OUT['breaks_found']} of their {HELD_OUT['breaks']} graph-break lines with "
        f"{HELD_OUT['false_positives']} false positives (recall {HELD_OUT['breaks_found'] / HELD_OUT['breaks']:.2f}, "
        "precision 1.00). The misses were `(mask == 0).all()` on an optional argument and `F.ctc_loss` with "
        "tensor lengths (both handled since) and a slice bounded by an unannotated parameter (still "
        "missed, marked `# miss`).",
        "",
        "## Per file",
        "",
        "| file | break TP | break FP | break FN | recompile TP | recompile FP | recompile sites missed |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in scores:
        lines.append(f"| `{Path(s.path).name}` | {len(s.break_tp)} | {len(s.break_fp)} | {len(s.break_fn)} | "
                     f"{len(s.recompile_tp)} | {len(s.recompile_fp)} | {len(s.recompiles_missed)} |")
    lines += ["", "## Disagreements with Dynamo", ""] + ([f"- {p}" for p in problems(scores)] or ["None."])
    for other in others:
        ob, orc = other["breaks"], other["recompiles"]
        lines += ["", f"## torch {other['torch']}", "",
                  f"The same corpus and dynlint, with Dynamo from torch {other['torch']} as the judge "
                  f"(`python bench/accuracy.py --json FILE` run there; {other.get('date', '')}).", "",
                  "| | predicted & observed | predicted only | observed only | precision | recall |",
                  "|---|---|---|---|---|---|",
                  f"| graph breaks (lines) | {ob['tp']} | {ob['fp']} | {ob['fn']} | **{ob['precision']:.3f}** | "
                  f"**{ob['recall']:.3f}** |",
                  f"| recompiles | {orc['tp']} / {orc['found']} sites | {orc['fp']} | {orc['missed']} sites | "
                  f"**{orc['precision']:.3f}** | **{orc['recall']:.3f}** |", ""]
        lines += [f"- {p}" for p in other.get("problems", [])] or ["No disagreements."]
    if summary["marker_disagreements"]:
        lines += ["", "## Markers that disagree with Dynamo", ""] + [f"- {d}" for d in summary["marker_disagreements"]]
    return "\n".join(lines) + "\n"


def print_labels(path: Path, fs: FileScore) -> None:
    """The file with Dynamo's verdict and dynlint's findings beside each line (for labelling)."""
    found = findings_by_line(static_findings(path))
    for i, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        dyn = fs.details.get(i, "")
        lint = ",".join(sorted(found.get(i, ())))
        flag = "  " if (bool(dyn) == bool(lint)) else "!!"
        if dyn or lint:
            print(f"{flag}{i:4d} {text[:70]:70s} | dynamo: {dyn[:60]:60s} | dynlint: {lint}")


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--write", type=Path, help="write the markdown report here (e.g. docs/accuracy.md)")
    ap.add_argument("--json", type=Path, help="write the summary as JSON here")
    ap.add_argument("--labels", action="store_true", help="print Dynamo's verdict beside each line")
    ap.add_argument("--also", type=Path, action="append", default=[],
                    help="a --json result from another torch release to add to the markdown report")
    ap.add_argument("files", nargs="*", type=Path, help="score only these corpus files")
    args = ap.parse_args(argv)

    observe = harness.observe
    files = [f.resolve() for f in args.files] or corpus_files(args.corpus)
    scores = []
    for path in files:
        fs = score_file(path, observe)
        scores.append(fs)
        if args.labels:
            print(f"==== {path.name}" + (f"  (error: {fs.error})" if fs.error else ""))
            print_labels(path, fs)
    summary = summarize(scores)
    b, r = summary["breaks"], summary["recompiles"]
    print(f"graph breaks: precision {b['precision']:.3f}  recall {b['recall']:.3f}  "
          f"(tp {b['tp']}, fp {b['fp']}, fn {b['fn']})")
    print(f"recompiles:   precision {r['precision']:.3f}  recall {r['recall']:.3f}  "
          f"(finding lines tp {r['tp']}, fp {r['fp']}; sites found {r['found']}, missed {r['missed']})")
    print(f"unverifiable findings (code Dynamo never traced): {summary['unverifiable']}")
    for e in summary["errors"]:
        print("error:", e)
    for d in summary["marker_disagreements"]:
        print("marker:", d)
    for s in scores:
        for ln in sorted(s.break_fp):
            print(f"FP   {Path(s.path).name}:{ln}")
        for ln in sorted(s.break_fn):
            print(f"MISS {Path(s.path).name}:{ln}  {s.details.get(ln, '')}")
        for ln in sorted(s.recompile_fp):
            print(f"RFP  {Path(s.path).name}:{ln}")
        for m in s.recompiles_missed:
            print(f"RMISS {Path(s.path).name}: {m}")
    import torch

    summary = dict(summary, torch=torch.__version__, date=datetime.date.today().isoformat(),
                   problems=problems(scores))
    if args.write:
        others = [json.loads(p.read_text(encoding="utf-8")) for p in args.also]
        text = render_markdown(scores, summary, others)
        # the sections above the corpus one (the zoo's: bench/zoo/score.py writes them) stay as they are
        old = args.write.read_text(encoding="utf-8") if args.write.exists() else ""
        above = old.partition("\n## The labelled corpus")[0].partition("\n")[2] if "\n## The labelled corpus" in old \
            else ""
        if above.strip():
            title, _, rest = text.partition("\n")
            text = title + "\n" + above + "\n" + rest.lstrip("\n")
        below = old.partition("\n<!-- probes:")       # and the probes' section below (bench/guards.py --score)
        if below[1]:
            text = text.rstrip("\n") + "\n" + below[1] + below[2]
        args.write.write_text(text, encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
