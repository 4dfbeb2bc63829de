"""A committed file whose name is a flag: pre-commit appends staged file names after the hook's own arguments,
so `--verify`, `--report=model.py`, `--cache-dir=..` or `--jobs=100000` in a pull request must be checked as
files, never obeyed. The hook's entry ends its options with `--`, and the CLI never takes a flag from a word
that names an existing file. Run as pre-commit runs the hook: the manifest's entry, split, then the file names."""
import os
import shlex
import stat

import pytest
import yaml

from conftest import ROOT, write_tree

MODEL = "import torch\n\n@torch.compile\ndef f(x):\n    return x.item()\n"
# run by --verify (it imports the examples): the marker says the repository's code ran
EXAMPLES = ("import pathlib\nimport dynlint\n\npathlib.Path({marker!r}).write_text('ran')\n\n\n"
            "@dynlint.example\ndef f_example():\n    import torch\n    from model import f\n    return f, (torch.ones(1),)\n")
FLAG_FILES = ["--verify", "--verify=1", "--report=model.py", "--cache-dir=..", "--jobs=100000", "-o"]


def _hook_entry() -> list:
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    return shlex.split(hooks["dynlint"]["entry"])[1:]          # after the `dynlint` executable


@pytest.fixture
def repo(tmp_path):
    marker = tmp_path / "ran"
    project = write_tree(tmp_path / "repo", {"pyproject.toml": "[tool.dynlint]\n", "model.py": MODEL,
                                             "dynlint_examples.py": EXAMPLES.format(marker=str(marker))})
    for name in FLAG_FILES:
        path = project / name
        path.write_text("#!/bin/sh\necho pwned\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return project, marker, {"XDG_CACHE_HOME": str(tmp_path / "user-cache")}


@pytest.mark.parametrize("entry", ["hook", "bare"], ids=["the hook's entry", "no -- (the CLI alone)"])
def test_committed_files_named_like_flags_are_checked_not_obeyed(cli, repo, entry):
    project, marker, env = repo
    before = {p.name: p.read_bytes() for p in project.parent.iterdir() if p.is_file()}
    args = (_hook_entry() if entry == "hook" else ["check", "--force-exclude"]) + FLAG_FILES + ["model.py"]
    r = cli(*args, cwd=project, env=env, timeout=120)
    assert not marker.exists(), "the examples ran: --verify was taken from a file name"
    assert (project / "model.py").read_text() == MODEL, "--report=model.py overwrote a project file"
    assert {p.name: p.read_bytes() for p in project.parent.iterdir() if p.is_file()} == before
    assert not (project.parent / ".dynlint_cache").exists(), "--cache-dir=.. wrote outside the checkout"
    assert r.returncode == 1 and "model.py:5:12: DYN201" in r.stdout, r.stdout + r.stderr


def test_the_hooks_entry_ends_its_options():
    assert _hook_entry()[-1] == "--"


def test_a_flag_the_user_gives_still_works_when_no_file_has_its_name(cli, repo):
    project, marker, env = repo
    r = cli("check", "model.py", "--select", "DYN2", "--format", "json", cwd=project, env=env)
    assert r.returncode == 1 and '"DYN201"' in r.stdout, r.stderr


def test_an_option_after_the_end_of_options_says_why_it_is_no_file(cli, repo):
    """pre-commit's `args:` come after the entry's `--`: the message says where options go instead."""
    project, marker, env = repo
    r = cli(*_hook_entry(), "--select=DYN1", "model.py", cwd=project, env=env)
    assert r.returncode == 2 and "no such file or directory: --select=DYN1" in r.stderr
    assert "[tool.dynlint]" in r.stderr


@pytest.mark.skipif(os.name != "posix", reason="flake8 run on a POSIX file name")
def test_flake8_checks_a_file_named_like_a_flag_as_a_file(repo):
    import subprocess
    import sys
    project, marker, env = repo
    (project / "--verify.py").write_text(MODEL)
    r = subprocess.run([sys.executable, "-m", "flake8", "--select", "DYN", "--", "--verify.py"], cwd=project,
                       env=dict(os.environ, **env), capture_output=True, text=True, timeout=120)
    assert not marker.exists()
    assert "--verify.py:5:12: DYN201" in r.stdout, r.stdout + r.stderr
