"""The torch you run: findings as they stand on each release of the measured table (dynlint/rules/releases.py,
written by bench/releases.py from real releases), the release read from the installed torch's package
metadata (without importing it) or named by `torch-version` / `--torch-version`, and `--diff-from`.

The table itself is checked against the installed torch by tests/test_rule_proofs.py; here every release of
the table is checked against what the table recorded: each rule example's findings on each release are those
whose pattern did what the rule says there, and a change between releases is reported as one."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import write_tree
from dynlint.api import check_source
from dynlint.rules import releases
from dynlint.rules.torch_release import ALL, AS_FOUND, BEHAVIOUR, RELEASES, behaviour, difference, holds
from dynlint.testing import example_cases

INVALID = example_cases("INVALID", runnable=True)


def _expected(rule, example, release):
    """The lines of the example's findings that hold on `release` by the table (all of them with ALL)."""
    out = set()
    for f in check_source(example.code, preview=True, torch_version=AS_FOUND).findings:
        if f.code != rule.code:
            continue
        per = behaviour(f.code, f.pattern)
        if release == ALL:
            kept = not per or any(holds(w) for w, _ in per.values())
        else:
            kept = release not in per or holds(per[release][0])
        if kept:
            out.add(f.line)
    return out


@pytest.mark.parametrize("release", [*RELEASES, ALL])
def test_each_release_reports_the_findings_that_hold_there(release):
    wrong = []
    for rule, i, ex in INVALID:
        got = {f.line for f in check_source(ex.code, preview=True, torch_version=release).findings
               if f.code == rule.code}
        if got != _expected(rule, ex, release):
            wrong.append(f"{rule.code} INVALID {i}: {sorted(got)} != {sorted(_expected(rule, ex, release))}")
    assert not wrong, "\n".join(wrong)


def test_the_table_covers_the_releases_the_readme_promises():
    assert RELEASES == ("2.11", "2.12", "2.13", "2.14", "2.15")
    assert all(releases.MEASURED[r].startswith(r + ".") for r in RELEASES), releases.MEASURED


def _changes():
    """(code, pattern, a release where it holds, one where it does nothing) for every measured change."""
    out = []
    for (code, pattern), per in BEHAVIOUR.items():
        yes = [r for r, (w, _) in per.items() if holds(w) and w != "failed"]
        no = [r for r, (w, _) in per.items() if not holds(w)]
        if yes and no:
            out.append((code, pattern, yes[0], no[0]))
    return out


def test_some_patterns_change_between_releases():
    # what the measurement found (the issue's own figures): random.random traced from 2.14, torch._assert
    # (DYN103) from 2.15; a table without changes would make the rest of this file vacuous
    changes = {(c, p): (y, n) for c, p, y, n in _changes()}
    assert ("DYN308", "random.random") in changes and ("DYN103", "") in changes, sorted(changes)


@pytest.mark.parametrize("code,pattern,yes,no", _changes(), ids=lambda v: str(v))
def test_a_change_between_releases_is_said_and_diffed(code, pattern, yes, no, tmp_path):
    rule, i, ex = next((r, i, e) for r, i, e in INVALID if r.code == code and any(
        f.code == code and f.pattern == pattern
        for f in check_source(e.code, preview=True, torch_version=AS_FOUND).findings))
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\npreview = true\n", "m.py": ex.code})

    def run(*args):
        return subprocess.run([sys.executable, "-m", "dynlint", "check", "m.py", "--no-cache", "--output-format",
                               "json", *args], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    on_yes = [f for f in json.loads(run("--torch-version", yes).stdout)["findings"] if f["code"] == code
              and f.get("pattern", "") == pattern]
    on_no = [f for f in json.loads(run("--torch-version", no).stdout)["findings"] if f["code"] == code
             and f.get("pattern", "") == pattern]
    assert on_yes and not on_no
    assert on_yes[0]["message"].endswith(f"({difference(BEHAVIOUR[(code, pattern)])})"), on_yes[0]["message"]
    diff = run("--torch-version", no, "--diff-from", yes)
    doc = json.loads(diff.stdout)
    assert (doc["from"], doc["to"]) == (yes, no)
    assert any(f["code"] == code and f.get("pattern", "") == pattern for f in doc["gone"]), doc
    back = run("--torch-version", yes, "--diff-from", no)
    assert back.returncode == 1 and any(f["code"] == code for f in json.loads(back.stdout)["new"])


def test_a_break_carries_the_gb_types_its_release_names():
    renamed = [(code, pattern, r, types) for (code, pattern), per in BEHAVIOUR.items()
               for r, (w, types) in per.items() if w == "break" and types]
    for rule, i, ex in INVALID:
        for code, pattern, release, types in renamed:
            if code != rule.code:
                continue
            for f in check_source(ex.code, preview=True, torch_version=release).findings:
                if f.code == code and f.pattern == pattern:
                    assert set(types) & set(f.gb_types), (code, pattern, release, types, f.gb_types)


# ---- which release ------------------------------------------------------------------------------------------
def _fake_torch(where: Path, version: str) -> Path:
    """A torch distribution's metadata alone (no package): what importlib.metadata reads; importing torch
    from here would fail."""
    info = where / f"torch-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n", encoding="utf-8")
    return where


@pytest.mark.parametrize("version,release,said", [
    ("2.14.1+cu130", "2.14", "the installed torch 2.14.1+cu130"),
    ("2.9.1", "2.11", "outside the measured"),
    ("3.1.0", "2.15", "outside the measured"),
])
def test_the_installed_torch_is_read_from_its_metadata_without_importing_it(tmp_path, version, release, said):
    site = _fake_torch(tmp_path / "site", version)
    write_tree(tmp_path / "p", {"pyproject.toml": "[tool.dynlint]\n", "m.py": "import random\n"})
    code = ("import sys, dynlint.cli as c; rc = c.main(['check', '.', '--show-settings']); "
            "assert 'torch' not in sys.modules, 'torch imported'; sys.exit(rc)")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path / "p", capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"},
                          timeout=120)
    assert done.returncode == 0, done.stderr
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith("torch-version"))
    assert f"'{release}'" in line and said in line, line


def test_the_setting_wins_and_an_unknown_release_is_a_usage_error(tmp_path):
    write_tree(tmp_path, {"pyproject.toml": '[tool.dynlint]\ntorch-version = "2.12"\n', "m.py": "x = 1\n"})

    def run(*args):
        return subprocess.run([sys.executable, "-m", "dynlint", "check", ".", *args], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
    shown = run("--show-settings").stdout
    assert "torch-version = '2.12'" in shown and "pyproject.toml" in shown.split("torch-version", 1)[1].splitlines()[0]
    assert "torch-version = '2.15'  # command line" in run("--show-settings", "--torch-version", "2.15.0").stdout
    for bad in ("2.9", "two", "2.x"):
        done = run("--torch-version", bad)
        assert done.returncode == 2 and "torch" in done.stderr and bad in done.stderr, done.stderr
    done = run("--diff-from", "2.12", "--torch-version", ALL)
    assert done.returncode == 2 and "compare two releases" in done.stderr


def test_rule_help_shows_the_table():
    done = subprocess.run([sys.executable, "-m", "dynlint", "rule", "DYN308"], capture_output=True, text=True,
                          timeout=60)
    table = [ln for ln in done.stdout.splitlines() if ln.startswith("|")]
    assert table[0] == "| pattern | " + " | ".join(f"torch {r}" for r in RELEASES) + " |"
    assert any(ln.startswith("| random.random |") and "traced" in ln for ln in table), table


@pytest.mark.parametrize("release", RELEASES)
def test_the_bundled_examples_on_each_release(release):
    """`dynlint check examples/ --torch-version R`: the findings as found, less those whose pattern the table
    says does nothing on R, each with the gb_types R names."""
    from dynlint import api
    root = Path(__file__).resolve().parent.parent / "examples"
    config = api.load_config([str(root)], api.known_codes())
    found = api.check([str(root)], config.with_(torch_version=AS_FOUND)).findings
    on = api.check([str(root)], config.with_(torch_version=release)).findings
    expected = [f for f in found if release not in behaviour(f.code, f.pattern)
                or holds(behaviour(f.code, f.pattern)[release][0])]
    assert [(f.path, f.line, f.code) for f in on] == [(f.path, f.line, f.code) for f in expected]
    for f in on:
        measured = behaviour(f.code, f.pattern).get(release)
        if measured and measured[1]:
            assert set(measured[1]) <= set(f.gb_types), (f, measured)


# ---- the Dynamo settings a project's code makes ---------------------------------------------------------------
def test_the_index_reads_the_dynamo_settings_a_file_makes():
    import ast

    from dynlint.linter.index import build_index
    src = ("import logging\nimport torch\nimport torch._dynamo.config as dc\nfrom torch._dynamo import config\n"
           "torch._dynamo.config.capture_scalar_outputs = True\nconfig.capture_dynamic_output_shape_ops = True\n"
           "def setup():\n    dc.reorderable_logging_functions.add(print)\n"
           "    torch._dynamo.config.reorderable_logging_functions.update({logging.info})\n"
           "other.config.capture_scalar_outputs = True\nconfig.recompile_limit = limit\n")
    got = set(build_index(ast.parse(src), "m.py", "m", False).dynamo_config)
    assert got == {("capture_scalar_outputs", "True"), ("capture_dynamic_output_shape_ops", "True"),
                   ("reorderable_logging_functions", "print"), ("reorderable_logging_functions", "logging.info"),
                   ("recompile_limit", "limit")}


def _setting_changes():
    """(setting, value, rule, pattern, release) where the table says the setting makes the pattern do nothing."""
    from dynlint.rules.torch_release import SETTINGS
    return [(s, v, code, pattern, r) for (s, v), table in SETTINGS.items() for (code, pattern), per in table.items()
            for r, (what, _) in per.items() if not holds(what)]


def test_some_settings_change_what_a_pattern_does():
    assert {s for s, *_ in _setting_changes()} >= {"capture_scalar_outputs", "reorderable_logging_functions"}


@pytest.mark.parametrize("setting,value,code,pattern,release",
                         [c for c in _setting_changes() if c[4] == "2.13"], ids=lambda v: str(v))
def test_a_setting_in_another_file_changes_the_findings(setting, value, code, pattern, release, tmp_path):
    """The setting, made in a file of the project that the checked one imports (importing it runs it), drops
    the findings it makes do nothing (the table's measurement); they come back when the line goes (the cache
    follows), and a setting in a file nobody imports (a script, a test) changes nothing."""
    rule, i, ex = next((r, i, e) for r, i, e in INVALID if r.code == code and any(
        f.code == code and f.pattern == pattern
        for f in check_source(e.code, preview=True, torch_version=AS_FOUND).findings))
    made = (f"torch._dynamo.config.{setting} = {value}\n" if setting != "reorderable_logging_functions"
            else f"torch._dynamo.config.{setting}.add({value})\n")
    imports = "import torch\n" + ("import logging\nimport warnings\n" if "." in value else "")
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\npreview = true\n", "m.py": "import settings\n" + ex.code,
                          "settings.py": imports + made, "script.py": imports + made})
    from dynlint import api
    config = api.load_config([str(tmp_path)], api.known_codes()).with_(torch_version=release)

    def found():
        return [f for f in api.check([str(tmp_path)], config, cache=True).findings
                if f.code == code and f.pattern == pattern]
    assert not found()
    (tmp_path / "settings.py").write_text(imports + "# " + made, encoding="utf-8")
    assert found()                                  # script.py still makes it, but m.py does not import it
