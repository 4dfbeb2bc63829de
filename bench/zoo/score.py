"""Score `dynlint check` against the zoo: what real Dynamo did on the model libraries' own models.

    python bench/zoo/score.py                    # the committed results, dynlint run on the same releases
    python bench/zoo/score.py --library timm     # one library (--results FILE: any results files)
    python bench/zoo/score.py --list misses      # also list each missed break site (or: false-alarms, all)
    python bench/zoo/score.py --write docs/accuracy.md
    python bench/zoo/score.py --findings DIR     # score reports already made (DIR/<library>.json)

Needs no torch: the labels come from the results files of bench/zoo/collect.py (the newest of each library),
the sources from the wheel of the same release (`pip download --no-deps`, unpacked once into bench/.data/),
and dynlint runs on each tree as a subprocess, every rule on (`--preview`), the way a user would run it, with
the library's `compiled` entry points (COMPILED: diffusers' scheduler steps) in the tree's pyproject.toml.

**Labels.** File names are `<library>/<path in the package>`.
* A *break site* is the innermost library frame of a graph break (`file:line`) in any record.
* A *recompile site* is the library line that installed a guard that failed (guards on tensor sizes
  carry no line and are automatic dynamic shapes at work: they are counted, not scored).
* A span is *covered* when Dynamo traced an instruction inside it (the `traced` / `partial` instruction
  positions collect.py records from Dynamo's own bytecode interpreter, in a record whose compiled run
  succeeded): not merely ran eagerly. So a short-circuited `A and B` covers `A` only, and a branch under
  `if not is_torchdynamo_compiling()`, first-call setup, and the rest of a frame Dynamo skipped are not
  covered.

**Scores.**
* *break-site recall*: break sites inside the span of some finding (same file, `line..end_line`);
* *covered-line precision*: a finding with a break or recompile site inside its span is right; one whose
  span is covered with neither is a false alarm; one whose span Dynamo never traced is unverified (not
  scored). A recompile prediction is refuted only by a record in which nothing recompiled: Dynamo names one
  failing guard per recompile ("Only the first failed check of guard_manager is reported"), so where the
  frame recompiled for another guard (most often the second call's new shapes), a second changed value is
  never seen, and the finding is unverified there.
  Precision = right / (right + false alarms);
* *recompile recall*: recompile sites inside the span of some finding. A site that only the second input
  shape tripped, on an int equality (`seq_len == N`), is the expected first shape change (an int taken
  from the sizes, dynamic after it): counted, not scored.
* *per record*: the same recalls counting a site once for every record that hit it (a site shared by 30
  models weighs 30), beside the per-site figures.

One line per library, then the overall figures over every library together.
"""
from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DATA = ROOT / "bench" / ".data"
sys.path.insert(0, str(ROOT))
from dynlint.rules import PREVIEW_BELOW, all_rules, measured_low  # noqa: E402

# Entry points a library's users compile from outside (the tree's [tool.dynlint] compiled setting).
COMPILED = {"diffusers": ["diffusers.schedulers.*:*.step"]}
INTERNAL_ERROR = "DYN001"            # dynlint's own failure on a file: not a prediction, not scored


def ensure_tree(library: str, version: str) -> Path:
    """bench/.data/<library>-<version>/<library>/**.py from the release's wheel (as bench/speed.py does for
    transformers, the same tree), with a pyproject.toml that makes it its own project."""
    version = version.split("+")[0]          # a local label (torch builds' +cu130) is no release
    tree = DATA / f"{library}-{version}"
    if not (tree / library).is_dir():
        DATA.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(DATA),
                        f"{library}=={version}"], check=True)
        wheel = next(DATA.glob(f"{library}-{version}-*.whl"))
        with zipfile.ZipFile(wheel) as z:
            z.extractall(tree, [n for n in z.namelist() if n.startswith(f"{library}/") and n.endswith(".py")])
    entries = ", ".join(f'"{e}"' for e in COMPILED.get(library, ()))
    (tree / "pyproject.toml").write_text("[tool.dynlint]\n" + (f"compiled = [{entries}]\n" if entries else ""))
    return tree


# ---- labels --------------------------------------------------------------------------------------------
def parse_ranges(text):
    out = set()
    for part in filter(None, text.split(",")):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


_INT_GUARD = re.compile(r"[\w.\[\]']+ == N")


def _expected(site) -> bool:
    """A recompile site that only the second input shape tripped, on an int equality (`seq_len == N`,
    `shape[N] == N`): an int taken from the sizes, specialised on the first shape and dynamic after: the
    expected first shape change, not a hazard."""
    return site["phases"] == {"shape2"} and all(_INT_GUARD.fullmatch(g) for g in site["guards"])


def read_results(path):
    """(header, records, library) of a results file; the library is the header's one key besides torch/python."""
    with open(path) as f:
        lines = [json.loads(line) for line in f]
    header = lines[0]
    library = next(k for k in header if k not in ("header", "torch", "python"))     # the first: timm's has torchvision too
    return header, lines[1:], library


class Labels:
    """What Dynamo did, from results files of one or more libraries: sites keyed `<library>/<file>`, line."""

    def __init__(self, results, trees):
        self.headers, self.records, self.trees = {}, [], trees       # trees: library -> its unpacked tree
        for path in results:
            header, records, library = read_results(path)
            self.headers[library] = header
            self.records += [dict(r, library=library) for r in records]
        self.breaks = {}               # (file, line) -> {"gb": Counter, "skipped": bool, "models": set}
        self.recompiles = {}           # (file, line) -> {"guards": Counter, "models": set}
        self.break_events, self.rc_events = [], []     # one site per record that hit it (per-record recall)
        self.size_recompiles = self.tensor_recompiles = 0
        self.full = collections.defaultdict(set)       # file -> lines whose every instruction Dynamo traced
        self.spans = collections.defaultdict(lambda: collections.defaultdict(list))  # file -> line -> spans
        # the same, from the records in which nothing recompiled: the only ones that can refute a recompile
        # prediction (Dynamo names one failing guard per recompile, so in a record that recompiled for another
        # guard, a second changed value stays unseen)
        self.quiet_full = collections.defaultdict(set)
        self.quiet_spans = collections.defaultdict(lambda: collections.defaultdict(list))
        self.ran = [r for r in self.records if r["status"] == "ok"]
        for rec in self.ran:
            self._add(rec)
        self.expected = {key for key, site in self.recompiles.items() if _expected(site)}

    def _add(self, rec):
        lib, model = rec["library"], (rec["library"], rec["model"])
        for b in rec.get("breaks", []):
            if not b.get("file"):
                continue
            key = (f"{lib}/{b['file']}", b["line"])
            site = self.breaks.setdefault(key, {"gb": collections.Counter(), "skipped": False, "models": set()})
            site["gb"][b["gb_types"][0] if b["gb_types"] else "?"] += 1
            site["skipped"] |= b["frame_skipped"]
            site["models"].add(model)
        self.break_events += sorted({(f"{lib}/{b['file']}", b["line"]) for b in rec.get("breaks", []) if b.get("file")})
        for rc in rec.get("recompiles", []):
            failures = rc.get("guard_failures", [])
            sourced = [g for g in failures if g.get("file") and g.get("line")]
            if not sourced:
                # no line to score: automatic dynamic shapes at work, or a tensor's dtype / stride / type changed
                sizes = all("size mismatch" in g.get("guard", "") for g in failures)
                self.size_recompiles += sizes
                self.tensor_recompiles += not sizes
            for g in sourced[:1]:      # the first failing guard is the one that caused the recompile
                key = (f"{lib}/{g['file']}", g["line"])
                site = self.recompiles.setdefault(key, {"guards": collections.Counter(), "models": set(),
                                                        "phases": set()})
                site["guards"][re.sub(r"\d+", "N", g.get("guard", ""))[:70]] += 1
                site["models"].add(model)
                site["phases"].add(rc.get("phase"))
                self.rc_events.append(key)
        partial = rec.get("partial", {})
        targets = [(self.full, self.spans)] + ([(self.quiet_full, self.quiet_spans)] if not rec.get("recompiles")
                                               else [])
        for file, ranges in rec.get("traced", {}).items():
            part = partial.get(file, {})
            for line in parse_ranges(ranges):
                for full, spans in targets:
                    if str(line) in part:
                        spans[f"{lib}/{file}"][line] += part[str(line)]
                    else:
                        full[f"{lib}/{file}"].add(line)

    def covered(self, file, line, column, end_line, end_column, quiet=False):
        """Did Dynamo trace some instruction inside this span (0-based columns, as dynlint's JSON)? `quiet`: in a
        record in which nothing recompiled."""
        full = (self.quiet_full if quiet else self.full).get(file, ())
        spans = (self.quiet_spans if quiet else self.spans).get(file, {})
        for n in range(line, end_line + 1):
            if n in full:
                return True
            lo = column if n == line else 0
            hi = end_column if n == end_line else float("inf")
            for c0, c1 in spans.get(n, ()):
                if c0 < hi and (c1 == -1 or c1 > lo):
                    return True
        return False

    def covered_lines(self):
        return sum(len(set(self.full[f]) | set(self.spans[f])) for f in set(self.full) | set(self.spans))

    def covered_files(self):
        return len(set(self.full) | set(self.spans))


# ---- dynlint's side ------------------------------------------------------------------------------------
def run_dynlint(tree, library, out):
    cmd = [sys.executable, "-m", "dynlint", "check", library, "--preview", "--format", "json",
           "--no-cache", "-o", str(out)]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    # exit 2 with a report: a rule's internal error on some file (a DYN001 finding), the rest is scored
    if proc.returncode not in (0, 1, 2) or not Path(out).exists():
        sys.exit(f"dynlint failed (exit {proc.returncode}):\n{proc.stderr}")
    report = json.loads(Path(out).read_text())
    errors = [f for f in report["findings"] if f["code"] == INTERNAL_ERROR]
    for f in errors:
        print(f"warning: dynlint on {library}: {f['path']}:{f['line']}: {f['message'][:150]}", file=sys.stderr)
    return report


def load_findings(report, library):
    """The findings in the library's package, `file` = `<library>/<path in the package>` as the labels'."""
    findings = []
    for f in report["findings"]:
        path = f["path"].replace("\\", "/")
        if path.startswith(f"{library}/") and f["code"] != INTERNAL_ERROR:
            findings.append(dict(f, file=path, library=library))
    return findings


# ---- scoring -------------------------------------------------------------------------------------------


def score(labels, findings):
    verdicts = []
    per_rule = collections.defaultdict(collections.Counter)
    recompile_codes = {r.code for r in all_rules() if r.recompiles}
    for f in findings:
        span = range(f["line"], f["end_line"] + 1)
        where = (f["file"], f["line"], f["column"], f["end_line"], f["end_column"])
        if any((f["file"], n) in labels.breaks or (f["file"], n) in labels.recompiles for n in span):
            verdict = "right"
        elif labels.covered(*where, quiet=f["code"] in recompile_codes):
            verdict = "false alarm"
        else:
            verdict = "unverified"
        per_rule[f["code"]][verdict] += 1
        verdicts.append((verdict, f))
    preview = {code for code, c in per_rule.items() if measured_low(c["right"], c["false alarm"])} | \
        {r.code for r in all_rules() if r.preview}                # as dynlint.rules.is_preview
    s = {"per_rule": per_rule, "verdicts": verdicts, "preview": preview}
    for name, chosen in (("all", findings), ("default", [f for f in findings if f["code"] not in preview])):
        s[name] = _totals(labels, chosen, [v for v, f in verdicts if f["code"] not in preview or name == "all"])
    rules = all_rules()
    for (file, line), site in labels.breaks.items():
        covering = {f["code"] for f in findings if f["file"] == file and f["line"] <= line <= f["end_line"]}
        for code in covering:
            per_rule[code]["sites"] += 1
        for r in rules:                  # recall per rule: the sites of the break kinds it predicts
            if set(site["gb"]) & set(r.gb_types):
                per_rule[r.code]["of"] += 1
                per_rule[r.code]["kind_found"] += r.code in covering
    return s


def _totals(labels, findings, verdicts):
    spans = collections.defaultdict(list)
    for f in findings:
        spans[f["file"]].append(f)

    def found(key):
        return any(f["line"] <= key[1] <= f["end_line"] for f in spans.get(key[0], ()))

    per_gb = collections.defaultdict(collections.Counter)
    misses = []
    for key, site in sorted(labels.breaks.items()):
        gb = site["gb"].most_common(1)[0][0]
        per_gb[gb]["sites"] += 1
        per_gb[gb]["found"] += found(key)
        if not found(key):
            misses.append((key, site))
    scored_rc = [key for key in labels.rc_events if key not in labels.expected]
    return {"right": verdicts.count("right"), "false": verdicts.count("false alarm"),
            "events": len(labels.break_events), "events_found": sum(map(found, labels.break_events)),
            "rc_events": len(scored_rc), "rc_events_found": sum(map(found, scored_rc)),
            "unverified": verdicts.count("unverified"), "sites": len(labels.breaks),
            "found": len(labels.breaks) - len(misses),
            "rc_sites": len(labels.recompiles) - len(labels.expected),
            "rc_found": sum(found(key) for key in labels.recompiles if key not in labels.expected),
            "rc_by": {key: sorted({f["code"] for f in spans.get(key[0], ()) if f["line"] <= key[1] <= f["end_line"]})
                      for key in labels.recompiles},
            "per_gb": per_gb, "misses": misses}


def _recompile_rules(s):
    """(right, right + false alarms) of the default rules that predict recompiles."""
    codes = {r.code for r in all_rules() if r.recompiles} - s["preview"]
    right = sum(s["per_rule"][c]["right"] for c in codes)
    return right, right + sum(s["per_rule"][c]["false alarm"] for c in codes)


def ratio(a, b):
    return f"{a / b:.2f}" if b else "n/a"


def describe(labels):
    """`transformers 5.4.0 (torch 2.13.0+cpu), timm 1.0.31 (torch 2.13.0+cu130)`: each results file's versions."""
    return ", ".join(f"{lib} {h[lib]} (torch {h['torch']})" for lib, h in sorted(labels.headers.items()))


def library_line(library, labels, s):
    """`timm: covered-line precision 0.xx, break-site recall 0.xx, recompile recall 0.xx (...)`: default rules."""
    d = s["default"]
    return (f"{library}: covered-line precision {ratio(d['right'], d['right'] + d['false'])}, break-site recall "
            f"{ratio(d['found'], d['sites'])}, recompile recall {ratio(d['rc_found'], d['rc_sites'])} (per record: "
            f"break {ratio(d['events_found'], d['events'])}, recompile {ratio(d['rc_events_found'], d['rc_events'])}; "
            f"{d['right']} right, {d['false']} false alarms, {d['unverified']} unverified; {d['sites']} break sites, "
            f"{d['rc_sites']} recompile sites; {len(labels.ran)} of {len(labels.records)} records compiled)")


def render(labels, s, command, per_library=()):
    models = {(r["library"], r["model"]) for r in labels.records}
    ran = {(r["library"], r["model"]) for r in labels.ran}
    d, a = s["default"], s["all"]
    out = [
        f"Zoo: {describe(labels)}, Python {sorted({h['python'] for h in labels.headers.values()})[-1]}: "
        f"{len(labels.records)} records of {len(models)} models, {len(labels.ran)} compiled ({len(ran)} models); "
        f"{d['sites']} break sites, {d['rc_sites']} recompile sites with a guard line "
        f"({labels.size_recompiles} recompiles on tensor sizes alone, {labels.tensor_recompiles} on a tensor's "
        f"dtype, stride or type with no source line, and {len(labels.expected)} sites of ints "
        f"taken from the sizes on the second shape: the expected first shape change, not scored), "
        f"{labels.covered_lines():,} lines Dynamo traced in {labels.covered_files()} files.",
        "",
        *(f"    {library_line(lib, lab, ls)}" for lib, lab, ls in per_library),
        *([""] if per_library else []),
        f"    covered-line precision: {ratio(d['right'], d['right'] + d['false'])}",
        f"    break-site recall: {ratio(d['found'], d['sites'])}",
        f"    recompile recall: {ratio(d['rc_found'], d['rc_sites'])}",
        f"    recompile-rule precision: {ratio(*_recompile_rules(s))}",
        "",
        f"Default rules: {d['right']} findings right, {d['false']} false alarms, {d['unverified']} unverified (on "
        f"code no compiled model traced); break sites found {d['found']} of {d['sites']}, recompile sites "
        f"{d['rc_found']} of {d['rc_sites']}. With the preview rules too (`--preview`): precision "
        f"{ratio(a['right'], a['right'] + a['false'])} ({a['right']} right, {a['false']} false alarms), break-site "
        f"recall {ratio(a['found'], a['sites'])}. Preview rules (precision below {PREVIEW_BELOW} with at least two "
        f"false alarms, or marked so by the rule): "
        f"{', '.join(sorted(s['preview'])) or 'none'}. Reproduce: `{command}`.",
        "",
        "Per rule: *break sites found* counts the sites inside its findings; *recall* is over the sites of the "
        "break kinds (gb_types) it predicts.",
        "",
        "| rule | findings | right | false alarms | unverified | precision | break sites found | recall |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for code, c in sorted(s["per_rule"].items()):
        tag = " (preview)" if code in s["preview"] else ""
        n = c["right"] + c["false alarm"] + c["unverified"]
        if not n and not c["of"]:
            continue
        out.append(f"| {code}{tag} | {n} | {c['right']} | {c['false alarm']} | {c['unverified']} | "
                   f"{ratio(c['right'], c['right'] + c['false alarm'])} | {c['sites']} | "
                   f"{ratio(c['kind_found'], c['of'])} ({c['kind_found']}/{c['of']}) |")
    out += ["", "| Dynamo's break (gb_type) | sites | found (default rules) | recall |", "|---|---:|---:|---:|"]
    for gb, c in sorted(d["per_gb"].items(), key=lambda kv: (-kv[1]["sites"], kv[0])):
        out.append(f"| {gb} | {c['sites']} | {c['found']} | {ratio(c['found'], c['sites'])} |")
    kinds = collections.defaultdict(lambda: [0, 0, set()])
    for key, site in labels.recompiles.items():
        if key in labels.expected:
            continue
        kind = guard_kind(site["guards"].most_common(1)[0][0])
        kinds[kind][0] += 1
        kinds[kind][1] += bool(d["rc_by"][key])
        kinds[kind][2] |= set(d["rc_by"][key])
    out += ["", "Recompile sites by the kind of the guard that failed (the most common one at the site):", "",
            "| guard kind | sites | found | by | recall |", "|---|---:|---:|---|---:|"]
    for kind, (n, found, by) in sorted(kinds.items(), key=lambda kv: (-kv[1][0], kv[0])):
        out.append(f"| {kind} | {n} | {found} | {', '.join(sorted(by)) or '–'} | {ratio(found, n)} |")
    return "\n".join(out)


GUARD_KINDS = (     # (kind, what the guard's text shows), first match wins
    ("wrapped function's identity (a decorator's wrapper)", r"___check_obj_id\(func\.__code__"),
    ("Python values after a break", r"___stack"),
    ("flag on a shared object (a cache)", r"\.is_(updated|initialized)\b"),
    ("length of varargs or a list", r"^len\(|not args"),
    ("None or a value", r" is None$| is not None$"),
    ("bool attribute", r"== (True|False)$"),
    ("string", r"== '"),
    ("int value", r"== N$"),
)


def guard_kind(guard: str) -> str:
    return next((kind for kind, pattern in GUARD_KINDS if re.search(pattern, guard)), "other")


def write_measured(path, labels, s):
    """dynlint/rules/measured.py: each rule's counts, read by `dynlint rules` and the choice of preview rules."""
    lines = ['"""What each rule\'s findings were on real code: written by `python bench/zoo/score.py --write '
             'docs/accuracy.md`',
             f"from the zoo (bench/zoo/: {describe(labels)}), read by `dynlint "
             'rules` and by the choice',
             'of preview rules. Data only."""', "", "MEASURED: dict = {"]
    for code, c in sorted(s["per_rule"].items()):
        if c["right"] + c["false alarm"] + c["unverified"] + c["of"]:
            lines.append(f'    "{code}": {{"right": {c["right"]}, "false": {c["false alarm"]}, '
                         f'"unverified": {c["unverified"]}, "sites": {c["sites"]}, "of": {c["of"]}, '
                         f'"kind_found": {c["kind_found"]}}},')
    lines.append("}")
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def listing(labels, s, what):
    out = []
    if what in ("misses", "all"):
        out.append("\nmissed break sites:")
        for (file, line), site in s["default"]["misses"]:
            gb = ", ".join(f"{g} x{n}" for g, n in site["gb"].most_common())
            text = _line(labels, file, line)
            out.append(f"  {file}:{line}  [{gb}{', skipped' if site['skipped'] else ''}] "
                       f"{len(site['models'])} models  | {text}")
        out.append("\nrecompile sites:")
        for (file, line), site in sorted(labels.recompiles.items()):
            by = s["default"]["rc_by"][(file, line)]
            tag = " (expected: second shape)" if (file, line) in labels.expected else \
                f" found by {', '.join(by)}" if by else " MISSED"
            out.append(f"  {file}:{line}{tag}  {dict(site['guards'])}  | {_line(labels, file, line)}")
    if what in ("false-alarms", "all"):
        out.append("\nfalse alarms:")
        for verdict, f in s["verdicts"]:
            if verdict == "false alarm":
                out.append(f"  {f['file']}:{f['line']}  {f['code']} {f['message'][:110]}")
    return "\n".join(out)


def _line(labels, file, line):
    try:
        library = file.split("/", 1)[0]
        return (labels.trees[library] / file).read_text(encoding="utf-8").splitlines()[line - 1].strip()[:90]
    except (OSError, IndexError):
        return ""


def write_doc(path, text):
    doc = Path(path).read_text(encoding="utf-8")
    start, end = "<!-- zoo:start -->", "<!-- zoo:end -->"
    block = f"{start}\n{text}\n{end}"
    if start in doc:
        doc = re.sub(re.escape(start) + ".*?" + re.escape(end), lambda _: block, doc, flags=re.S)
    else:
        title, _, rest = doc.partition("\n")
        doc = f"{title}\n\n## Real code: the zoo (`bench/zoo/score.py`)\n\n{block}\n{rest}"
    Path(path).write_text(doc, encoding="utf-8")


def newest_results(library=None):
    """The newest results file of each library (or of one) under bench/zoo/results/."""
    newest = {}
    for path in sorted(glob.glob(str(HERE / "results" / "*.jsonl")), key=_version_key):
        newest[read_results(path)[2]] = path
    return [p for lib, p in sorted(newest.items()) if library in (None, lib)]


def _version_key(path):
    return [int(n) if n.isdigit() else n for n in re.split(r"(\d+)", os.path.basename(path))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", action="append", help="a zoo results file (repeatable; default: the newest of "
                    "each library under bench/zoo/results/)")
    ap.add_argument("--library", help="score this library only")
    ap.add_argument("--findings", help="a dynlint JSON report to score instead of running dynlint (one library), "
                    "or a folder of them, LIBRARY.json each")
    ap.add_argument("--list", choices=("misses", "false-alarms", "all"), help="also list these")
    ap.add_argument("--write", metavar="DOC", help="put the tables in this markdown file (between zoo markers)")
    args = ap.parse_args()
    results = args.results or newest_results(args.library)
    per_library, findings, trees = [], [], {}
    for path in results:
        header, _, library = read_results(path)
        trees[library] = tree = ensure_tree(library, header[library])
        if args.findings:
            given = Path(args.findings)
            report = json.loads((given / f"{library}.json" if given.is_dir() else given).read_text())
        else:
            with tempfile.TemporaryDirectory() as tmp:
                report = run_dynlint(tree, library, Path(tmp) / "report.json")
        mine = load_findings(report, library)
        labels = Labels([path], trees)
        per_library.append((library, labels, score(labels, mine)))
        findings += mine
    labels = Labels(results, trees)
    s = score(labels, findings)
    text = render(labels, s, "python bench/zoo/score.py", per_library)
    print(text)
    if args.list:
        print(listing(labels, s, args.list))
    if args.write:
        write_doc(args.write, text)
        write_measured(ROOT / "dynlint" / "rules" / "measured.py", labels, s)


if __name__ == "__main__":
    main()
