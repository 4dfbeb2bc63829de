"""What each rule's examples and the guard probes do on each torch release: writes dynlint/rules/releases.py.

    python bench/releases.py --venvs /work/venvs                 # measure every torch-*/ venv there, print
    python bench/releases.py --venvs /work/venvs --write         # and write the table the rules read
    python bench/releases.py --make 2.11.0,2.15.0 --venvs DIR    # first build the venvs that are missing

Each release runs in a virtual environment of its own, outside the repository (`DIR/torch-VERSION`, with
numpy, scipy and dynlint's dependencies; a CUDA build runs on the CPU as well), and this interpreter's torch
is measured too. In each, this script runs again with `--measure`, importing dynlint from this checkout, and
records under real Dynamo (dynlint/compiler/harness.py, the eager backend, which traces, guards and breaks
as Inductor does):

* every rule's INVALID example with calls: for each of the rule's findings there, what Dynamo did at the
  finding's line (dynlint.testing.observed: the break with its gb_types, the recompile at the guard, the
  error, the warning, or nothing);
* every VALID example with calls: whether it compiles cleanly, with and without `fullgraph=True`;
* the guard probes of bench/guard_probes.py: how often each recompiles;
* the gb_types of the release's graph_break_registry.json that the rules name.

The table keys a rule's behaviour by the pattern of its findings (the call a finding names, `random.random`;
"" for the rule as a whole): a pattern holds on a release where one of its examples did what the rule says.
A release whose venv could not be made or run is reported, not guessed.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

from dynlint.rules.torch_release import release_key, release_of

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "dynlint" / "rules" / "releases.py"
DOC = ROOT / "docs" / "releases.md"
DEPENDENCIES = ("numpy", "scipy", "libcst", "tqdm", "pathspec", "nbformat")


# ---- in one release's interpreter ----------------------------------------------------------------------------
def measure(out: Path) -> None:
    import torch

    sys.path.insert(0, str(ROOT / "bench"))
    import guards
    from guard_probes import PROBES

    from dynlint.api import check_source
    from dynlint.compiler.harness import observe
    from dynlint.compiler.registry import load_gb_ids
    from dynlint.rules import all_rules
    from dynlint.rules.torch_release import AS_FOUND
    from dynlint.testing import example_cases, observed, proof_kind

    named = {t for r in all_rules() for t in r.gb_types}
    registry = set(load_gb_ids())
    doc: dict = {"torch": torch.__version__, "registry_size": len(registry), "rules_name": sorted(named),
                 "registry_named": sorted(named & registry), "invalid": [], "valid": [], "probes": [],
                 "settings": {}}
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        for rule, i, ex in example_cases("INVALID", runnable=True):
            path = os.path.join(tmp, f"{rule.code}_invalid_{i}.py")
            Path(path).write_text(ex.code, encoding="utf-8")
            findings = [f for f in check_source(ex.code, preview=True, torch_version=AS_FOUND).findings
                        if f.code == rule.code]
            obs = observe(path, ex.calls)
            entry = {"code": rule.code, "i": i, "findings": [
                {"line": f.line, "pattern": f.pattern, "what": what, "gb_types": list(types)}
                for f in findings for what, types in [observed(rule, f, obs, path)]]}
            if rule.scope == "region" and proof_kind(rule) == "break" and obs.breaks:
                entry["fullgraph_raises"] = observe(path, ex.calls, fullgraph=True).error is not None
            doc["invalid"].append(entry)
        for rule, i, ex in example_cases("VALID", runnable=True):
            path = os.path.join(tmp, f"{rule.code}_valid_{i}.py")
            Path(path).write_text(ex.code, encoding="utf-8")
            obs = observe(path, ex.calls)
            what = [f"break: {'; '.join(b.gb_types)}" for b in obs.breaks]
            what += ["recompile"] * len(obs.recompiles)
            what += [f"error: {type(obs.error).__name__}"] if obs.error is not None else []
            if not what:
                strict = observe(path, ex.calls, fullgraph=True)
                what += [f"fullgraph error: {type(strict.error).__name__}"] if strict.error is not None else []
            doc["valid"].append({"code": rule.code, "i": i, "what": sorted(set(what))})
    for name, patch, patterns in settings_variants():
        runs = doc["settings"].setdefault(name, [])
        with tempfile.TemporaryDirectory() as tmp:
            for rule, i, ex in example_cases("INVALID", runnable=True):
                findings = [f for f in check_source(ex.code, preview=True, torch_version=AS_FOUND).findings
                            if f.code == rule.code and (patterns is None or f.pattern in patterns)]
                if proof_kind(rule) != "break" or not findings:
                    continue
                path = os.path.join(tmp, f"{rule.code}_invalid_{i}.py")
                Path(path).write_text(ex.code, encoding="utf-8")
                with torch._dynamo.config.patch(**patch):
                    obs = observe(path, ex.calls)
                runs.append({"code": rule.code, "i": i, "findings": [
                    {"line": f.line, "pattern": f.pattern, "what": what, "gb_types": list(types)}
                    for f in findings for what, types in [observed(rule, f, obs, path)]]})
    for probe in PROBES:
        o = guards.measure(probe)
        doc["probes"].append({"kind": probe.kind, "change": probe.change, "recompiles": o.recompiles,
                              "behaviour": o.behaviour})
    doc["seconds"] = round(time.monotonic() - started)
    out.write_text(json.dumps(doc, indent=1), encoding="utf-8")


def settings_variants():
    """(name, torch._dynamo.config patch, the patterns it can change or None for all) of the Dynamo settings a
    project's code may make that change what a break rule's pattern does."""
    import logging
    import warnings

    logging_functions = {"print": print, "warnings.warn": warnings.warn, "logging.info": logging.info,
                         "logging.warning": logging.warning, "logging.debug": logging.debug}
    return [("capture_scalar_outputs=True", {"capture_scalar_outputs": True}, None),
            ("capture_dynamic_output_shape_ops=True", {"capture_dynamic_output_shape_ops": True}, None),
            ("reorderable_logging_functions", {"reorderable_logging_functions": set(logging_functions.values())},
             set(logging_functions))]


# ---- driving the releases --------------------------------------------------------------------------------------
def make(version: str, venvs: Path) -> Path:
    """A venv with torch==VERSION and what the examples need (pip; the cap on torch in this machine's pip
    configuration does not apply to it)."""
    where = venvs / f"torch-{version}"
    if not (where / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
        env = {**os.environ, "PIP_CONSTRAINT": os.devnull}
        subprocess.run([str(where / "bin" / "pip"), "install", "-q", f"torch=={version}", *DEPENDENCIES],
                       check=True, env=env)
    return where


def run_release(python: str, out: Path) -> str:
    """Measure under `python`; '' on success, else why not."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CUDA_VISIBLE_DEVICES": ""}
    try:
        done = subprocess.run([python, __file__, "--measure", str(out)], env=env, capture_output=True, text=True,
                              timeout=3600)
    except subprocess.TimeoutExpired:
        return "timed out after an hour"
    return "" if done.returncode == 0 else (done.stderr.strip().splitlines() or ["exit %d" % done.returncode])[-1]


def table(docs: List[dict]) -> str:
    """dynlint/rules/releases.py from the measurements (one per release)."""
    docs = sorted(docs, key=lambda d: release_key(release_of(d["torch"])))
    behaviour = _aggregate((release_of(d["torch"]), ex, f) for d in docs for ex in d["invalid"]
                           for f in ex["findings"])
    fullgraph: Dict[str, Dict[str, bool]] = {}
    for d in docs:
        for ex in d["invalid"]:
            if "fullgraph_raises" in ex:
                per = fullgraph.setdefault(ex["code"], {})
                rel = release_of(d["torch"])
                per[rel] = per.get(rel, False) or ex["fullgraph_raises"]
    settings: Dict[tuple, Dict[tuple, Dict[str, tuple]]] = {}
    for name in sorted({n for d in docs for n in d.get("settings", {})}):
        measured = _aggregate((release_of(d["torch"]), ex, f) for d in docs for ex in d["settings"].get(name, ())
                              for f in ex["findings"])
        for key, per in measured.items():
            setting = tuple(name.split("=")) if "=" in name else (name, key[1])
            changed = {r: v for r, v in per.items() if v[0] != "failed" and behaviour.get(key, {}).get(r) != v}
            if changed:
                settings.setdefault(setting, {})[key] = changed
    valid: Dict[tuple, Dict[str, str]] = {}
    for d in docs:
        for ex in d["valid"]:
            valid.setdefault((ex["code"], ex["i"]), {})[release_of(d["torch"])] = "; ".join(ex["what"]) or "clean"
    probes: Dict[str, Dict[str, str]] = {}
    for d in docs:
        for p in d["probes"]:
            probes.setdefault(p["change"], {})[release_of(d["torch"])] = p["behaviour"]
    lines = [
        '"""What dynlint\'s patterns do on each torch release, measured: written by `python bench/releases.py '
        '--write`',
        "from real releases, each run in its own venv on the CPU (see the script). Read by TorchRule.on_release;",
        'tests/test_rule_proofs.py checks the installed release against it. Data only."""', "",
        "# release -> the build that was measured, and its graph-break registry's size",
        "MEASURED = " + repr({release_of(d["torch"]): d["torch"] for d in docs}),
        "REGISTRY_SIZE = " + repr({release_of(d["torch"]): d["registry_size"] for d in docs}),
        "# Below, \"2.11-2.13\" stands for every measured release from 2.11 to 2.13 (rules/torch_release.py reads it).",
        "# (rule, pattern) -> release -> (what Dynamo did at the finding: break / recompile / error / warning /",
        "# not compiled / nothing / failed, the gb_types it named); pattern '' is the rule as a whole",
        "BEHAVIOUR = {", *_entries(behaviour), "}",
        "# rule -> release -> whether fullgraph=True raises at its break (else it captures the value)",
        "FULLGRAPH_RAISES = {", *_entries(fullgraph), "}",
        "# (Dynamo setting the project's code makes, value) -> (rule, pattern) -> release -> what Dynamo did",
        "# there instead (only where it differs from BEHAVIOUR)",
        "SETTINGS = {"]
    for setting in sorted(settings):
        lines.append(f"    {setting!r}: {{")
        lines += ["    " + line for line in _entries(settings[setting])]
        lines.append("    },")
    lines += ["}",
        "# (rule, index of a VALID example) -> release -> 'clean' or what happened",
        "VALID = {", *_entries(valid), "}",
        "# the gb_types the rules name that each release's graph_break_registry.json lacks",
        "REGISTRY_LACKS = {"]
    for d in docs:
        lacks = sorted(set(d["rules_name"]) - set(d["registry_named"]))
        lines.append(f"    {release_of(d['torch'])!r}: frozenset({{" + ("" if lacks else "}),"))
        lines += [f"        {t!r}," for t in lacks] + (["    }),"] if lacks else [])
    lines += ["}", "# guard probe (bench/guard_probes.py) -> release -> how often it recompiles",
              "PROBES = {", *_entries(probes), "}"]
    return "\n".join(lines) + "\n"


def _entries(table: dict) -> List[str]:
    """`key: {releases: value, ...},` lines: consecutive releases with one value as a range ("2.11-2.13"), a
    range per line where one line would pass 120 characters."""
    out = []
    for key in (sorted(table) if not isinstance(next(iter(table), ""), str) else table):
        runs = _runs(table[key])
        one = f"    {key!r}: {runs!r},"
        if len(one) <= 120:
            out.append(one)
            continue
        out.append(f"    {key!r}: {{")
        out += [f"        {r!r}: {v!r}," for r, v in runs.items()]
        out.append("    },")
    return out


def _runs(per: dict) -> dict:
    """{release: value} with consecutive releases of equal value merged: {"2.11-2.13": v, "2.14": w}."""
    out, group = {}, []
    items = sorted(per.items(), key=lambda kv: release_key(kv[0]))
    for i, (release, value) in enumerate(items):
        group.append(release)
        if i + 1 == len(items) or items[i + 1][1] != value:
            out[group[0] if len(group) == 1 else f"{group[0]}-{group[-1]}"] = value
            group = []
    return out


def _aggregate(found) -> Dict[tuple, Dict[str, tuple]]:
    """(rule, pattern) -> release -> outcome, over (release, example, finding) triples: one example that does
    what the rule says is enough; the gb_types of those that do are joined."""
    out: Dict[tuple, Dict[str, tuple]] = {}
    for rel, ex, f in found:
        key = (ex["code"], f["pattern"])
        was = out.setdefault(key, {}).get(rel)
        now = (f["what"], tuple(f["gb_types"]))
        if was is None or _rank(now) > _rank(was):
            out[key][rel] = now
        elif was[0] == now[0] and now[1] != was[1]:
            out[key][rel] = (was[0], tuple(sorted(set(was[1]) | set(now[1]))))
    return out


def _rank(outcome: tuple) -> int:
    return {"failed": 0, "nothing": 1}.get(outcome[0], 2)


def summary(docs: List[dict]) -> str:
    rows = ["| release | build | seconds | INVALID findings that hold | VALID clean | probes |", "|---|---|---:|---:|---:|---:|"]
    for d in sorted(docs, key=lambda d: release_key(release_of(d["torch"]))):
        found = [f for ex in d["invalid"] for f in ex["findings"]]
        held = sum(f["what"] not in ("nothing", "failed") for f in found)
        clean = sum(not ex["what"] for ex in d["valid"])
        rows.append(f"| {release_of(d['torch'])} | {d['torch']} | {d['seconds']} | {held}/{len(found)} | "
                    f"{clean}/{len(d['valid'])} | {len(d['probes'])} |")
    return "\n".join(rows) + "\n"


def report(docs: List[dict]) -> str:
    """docs/releases.md: what was measured, and every pattern, VALID example and guard probe whose outcome
    differs between releases."""
    docs = sorted(docs, key=lambda d: release_key(release_of(d["torch"])))
    rels = [release_of(d["torch"]) for d in docs]
    out = ["# What changes between torch releases", "",
           "Generated by `python bench/releases.py --venvs DIR --write` (each release in its own venv, on the CPU; "
           "Python " + sys.version.split()[0] + "). The table the rules read is `dynlint/rules/releases.py`.", "",
           summary(docs), "## Findings whose behaviour differs", "",
           "| rule | pattern | " + " | ".join(rels) + " |", "|---|---|" + "---|" * len(rels)]
    per: Dict[tuple, Dict[str, str]] = {}
    for d in docs:
        for ex in d["invalid"]:
            for f in ex["findings"]:
                cell = f["what"] + (f" ({'; '.join(f['gb_types'])})" if f["gb_types"] else "")
                got = per.setdefault((ex["code"], f["pattern"]), {})
                got[release_of(d["torch"])] = max(got.get(release_of(d["torch"]), ""), cell)
    for (code, pattern), cells in sorted(per.items()):
        if len(set(cells.values())) > 1:
            out.append(f"| {code} | {f'`{pattern}`' if pattern else '–'} | " +
                       " | ".join(cells.get(r, "–").replace("|", "\\|") for r in rels) + " |")
    out += ["", "## Guard probes whose behaviour differs (bench/guard_probes.py)", "",
            "| probe | " + " | ".join(rels) + " |", "|---|" + "---|" * len(rels)]
    probes: Dict[str, Dict[str, str]] = {}
    for d in docs:
        for p in d["probes"]:
            probes.setdefault(p["change"], {})[release_of(d["torch"])] = f"{p['behaviour']} ({p['recompiles']})"
    for change, cells in probes.items():
        if len(set(c.split(" (")[0] for c in cells.values())) > 1:
            out.append(f"| {change} | " + " | ".join(cells.get(r, "–") for r in rels) + " |")
    changed_valid = [(ex["code"], ex["i"]) for d in docs for ex in d["valid"] if ex["what"]]
    out += ["", f"VALID examples that do not compile cleanly on some release: {len(set(changed_valid))}."]
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--venvs", type=Path, help="folder of venvs named torch-VERSION")
    parser.add_argument("--make", default="", help="comma-separated torch versions whose venvs to build first")
    parser.add_argument("--keep", type=Path, default=Path(tempfile.gettempdir()) / "dynlint-releases",
                        help="where each release's measurement is kept (JSON)")
    parser.add_argument("--reuse", action="store_true", help="use the measurements kept from an earlier run")
    parser.add_argument("--write", action="store_true",
                        help=f"write {TABLE.relative_to(ROOT)} and {DOC.relative_to(ROOT)}")
    args = parser.parse_args()
    if args.measure:
        measure(args.measure)
        return
    pythons = {"this": sys.executable}
    if args.venvs:
        for v in filter(None, args.make.split(",")):
            make(v, args.venvs)
        pythons.update((p.name, str(p / "bin" / "python")) for p in sorted(args.venvs.glob("torch-*"))
                       if (p / "bin" / "python").exists())
    args.keep.mkdir(parents=True, exist_ok=True)
    docs, problems = [], []
    for name, python in pythons.items():
        out = args.keep / f"{name}.json"
        why = "" if args.reuse and out.exists() else run_release(python, out)
        if why:
            problems.append(f"{name}: {why}")
            continue
        doc = json.loads(out.read_text(encoding="utf-8"))
        if all(release_of(doc["torch"]) != release_of(d["torch"]) for d in docs):
            docs.append(doc)
    print(summary(docs))
    for p in problems:
        print(f"not measured: {p}", file=sys.stderr)
    if args.write and docs:
        TABLE.write_text(table(docs), encoding="utf-8")
        DOC.write_text(report(docs), encoding="utf-8")
        print(f"wrote {TABLE.relative_to(ROOT)} and {DOC.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
