"""The flake8 plugin, run through the real flake8 as a user runs it, against the CLI's own findings."""
import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dynlint import flake8_plugin

pytest.importorskip("flake8")

PROJECT = Path(__file__).resolve().parent / "fixtures" / "integrations" / "project"
FLAKE8_LINE = re.compile(r"(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]+\d+) (?P<text>.*)")


@pytest.fixture
def project(tmp_path):
    return shutil.copytree(PROJECT, tmp_path / "project")


def flake8(project, *args):
    """`flake8` in the project, ignoring any flake8 configuration around it; -> {(path, line, col, code): text}."""
    r = subprocess.run([sys.executable, "-m", "flake8", "--isolated", *args], cwd=project, capture_output=True,
                       text=True, timeout=120, env=dict(os.environ, NO_COLOR="1"))
    assert r.returncode in (0, 1) and not r.stderr, r.stderr
    out = {}
    for line in r.stdout.splitlines():
        m = FLAKE8_LINE.fullmatch(line)
        assert m, line
        out[(m["path"].removeprefix("./"), int(m["line"]), int(m["col"]), m["code"])] = m["text"]
    return out


def cli_findings(cli, project):
    r = cli("check", "--format", "json", cwd=project)
    return {(f["path"], f["line"], f["column"] + 1, f["code"]): f["message"]
            for f in json.loads(r.stdout)["findings"]}


def test_same_findings_as_the_cli(cli, project):
    expected = cli_findings(cli, project)
    got = flake8(project, "--select", "DYN", ".")
    assert set(got) == set(expected) and len(expected) >= 5
    assert got == expected                                           # "path:line:col: CODE message", same message
    assert ("utils.py", 6, 13, "DYN201") in got                      # found through model.py's forward
    assert ("pkg/layers.py", 6, 29, "DYN101") in got                 # columns in characters, after "größe"


def test_a_file_is_checked_with_its_project_in_view(project):
    # Only utils.py is given, but its helper is compiled code because model.py's forward calls it.
    got = flake8(project, "--select", "DYN", "utils.py")
    assert ("utils.py", 6, 13, "DYN201") in got
    assert all(line < 10 for _, line, _, _ in got)                 # nothing in the uncompiled `not_compiled`


def test_select_and_extend_ignore(project):
    only = {k[3] for k in flake8(project, "--select", "DYN1", ".")}
    assert "DYN101" in only and all(code.startswith("DYN1") for code in only)
    rest = {k[3] for k in flake8(project, "--select", "DYN", "--extend-ignore", "DYN101,DYN3", ".")}
    assert {"DYN201", "DYN401"} <= rest and not any(c == "DYN101" or c.startswith("DYN3") for c in rest)
    assert {k[3] for k in flake8(project, ".")} >= {"DYN101", "DYN201", "DYN301", "DYN401", "F401"}  # on by default


@pytest.mark.parametrize("comment,reported", [("# noqa: DYN201", False), ("# noqa", False),
                                              ("# noqa: E501", True), ("# noqa: DYN1", True)])
def test_noqa(project, comment, reported):
    utils = project / "utils.py"
    utils.write_text(utils.read_text().replace("scale = x.abs().max().item()",
                                               f"scale = x.abs().max().item()  {comment}"))
    assert (("utils.py", 6, 13, "DYN201") in flake8(project, "--select", "DYN", ".")) is reported


def test_parse_errors_are_reported_as_dyn000(project):
    # flake8 itself stops at a syntax error (E999), so ask the plugin directly, as flake8 would.
    broken = project / "broken.py"
    broken.write_text("x = 1\ndef f(:\n    pass\n")
    findings = list(flake8_plugin.Flake8Plugin(ast.parse(""), str(broken), broken.read_text().splitlines(True)).run())
    assert len(findings) == 1
    line, col, text, kind = findings[0]
    assert (line, text.split()[0], kind) == (2, "DYN000", flake8_plugin.Flake8Plugin)
    assert text.startswith("DYN000 cannot parse file")


def test_stdin_is_checked_as_the_file_it_stands_for(project):
    """pylsp and editors pipe the unsaved buffer: `flake8 - --stdin-display-name utils.py`. Its helper is
    compiled code because model.py's forward calls it, and the buffer's own lines are what is reported."""
    buffer = (project / "utils.py").read_text(encoding="utf-8").replace("def ", "def unused():\n    pass\n\n\ndef ", 1)
    r = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "DYN", "-",
                        "--stdin-display-name", "utils.py"], cwd=project, input=buffer, capture_output=True,
                       text=True, timeout=120, env=dict(os.environ, NO_COLOR="1"))
    assert r.returncode == 1 and not r.stderr, r.stderr
    lines = [FLAKE8_LINE.fullmatch(line) for line in r.stdout.splitlines()]
    assert ("utils.py", 10, "DYN201") in {(m["path"], int(m["line"]), m["code"]) for m in lines}   # 6 + 4 lines


def test_project_is_checked_once_per_process(project, monkeypatch):
    from dynlint import api

    calls = []
    real_check = api.check
    monkeypatch.setattr(api, "check", lambda *a, **k: calls.append(a) or real_check(*a, **k))
    monkeypatch.setattr(flake8_plugin, "_PROJECTS", {})
    def lines(name):
        return (project / name).read_text(encoding="utf-8").splitlines(keepends=True)
    per_file = {name: list(flake8_plugin.Flake8Plugin(ast.parse(""), str(project / name), lines(name)).run())
                for name in ("model.py", "utils.py", "pkg/layers.py", "pkg/__init__.py")}
    assert len(calls) == 1
    assert {(9, 11), (10, 12)} <= {f[:2] for f in per_file["model.py"]}    # 0-based columns, as flake8 wants
    assert "DYN201" in [f[2].split()[0] for f in per_file["utils.py"]] and per_file["pkg/__init__.py"] == []


@pytest.mark.parametrize("args, runs", [
    (("--select", "E,W,F"), False),
    (("--extend-ignore", "DYN"), False),
    (("--select", "DYN2"), True),
    ((), True),                                     # flake8's default selection takes in every plugin's codes
])
def test_nothing_is_run_unless_a_dyn_code_is_selected(project, args, runs):
    got = flake8(project, *args, ".")
    assert any(code.startswith("DYN") for _, _, _, code in got) == runs
    assert (project / ".dynlint_cache").is_dir() == runs           # the project run fills the cache


TAKE_TURNS = """
import os, sys
from dynlint.linter import engine
run = engine.run

def logged(files, config, rules, cache=None, **kw):
    with open(sys.argv[1], "a") as log:            # what each worker found in the cache when its run began
        log.write(("warm" if cache is not None and cache.checks else "cold") + f" {os.getpid()}\\n")
    return run(files, config, rules, cache=cache, **kw)

engine.run = logged
from flake8.main.cli import main
sys.exit(main(["--isolated", "--select", "DYN", "-j", "4", *sys.argv[2:]]))
"""


def test_flake8_workers_take_turns_on_one_project_run(project, tmp_path):
    for i in range(12):                             # enough files for every worker to get some
        (project / f"extra_{i}.py").write_text(f"def helper_{i}(x):\n    return x\n")
    script, log = tmp_path / "take_turns.py", tmp_path / "runs.log"
    script.write_text(TAKE_TURNS)
    r = subprocess.run([sys.executable, str(script), str(log), "."], cwd=project, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 1 and not r.stderr, r.stderr
    assert "utils.py:6:13: DYN201" in r.stdout
    runs = log.read_text().split("\n")[:-1]
    assert len({line.split()[1] for line in runs}) >= 2, runs       # several workers checked the project...
    assert [line.split()[0] for line in runs].count("cold") == 1, runs     # ...and only the first from scratch
