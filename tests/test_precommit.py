"""The pre-commit hooks, end to end: `pre-commit try-repo` installs this project into a fresh virtualenv
(pip, from the package index) and runs the hook on a git repository with a bad file, then a fixed one."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pre_commit = pytest.importorskip("pre_commit", reason="pre-commit is not installed (pip install pre-commit)")
from pre_commit.clientlib import load_manifest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BAD = '''\
import torch


@torch.compile
def scale(x):
    if x.sum() > 0:
        return x * 2
    return x
'''
FIXED = '''\
import torch


@torch.compile
def scale(x):
    return torch.where(x.sum() > 0, x * 2, x)
'''


def test_manifest_declares_both_hooks():
    hooks = {h["id"]: h for h in load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))}
    static, verify = hooks["dynlint"], hooks["dynlint-verify"]
    assert (static["entry"], static["language"], static["types_or"], static["require_serial"]) == \
        ("dynlint check --force-exclude --", "python", ["python", "jupyter"], True)
    assert static["pass_filenames"] and static["stages"] == []          # every stage, the staged files
    assert (verify["entry"], verify["stages"], verify["pass_filenames"]) == \
        ("dynlint check --verify", ["manual"], False)
    assert any(dep.startswith("torch") for dep in verify["additional_dependencies"])   # the verify extra


def snapshot_of_this_project(dest: Path, env: dict) -> Path:
    """A one-commit repository of this working tree (tracked and new files): try-repo on the project itself
    would take HEAD plus changes to tracked files only, missing files not yet committed."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split("\0")
    for rel in filter(None, listed):
        if (ROOT / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "snapshot"]):
        subprocess.run(["git", *args], cwd=dest, env=env, check=True, capture_output=True)
    return dest


@pytest.mark.slow
def test_try_repo_fails_on_a_finding_then_passes_after_the_fix(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), NO_COLOR="1",
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    env.pop("PRE_COMMIT", None)
    hooks_repo = snapshot_of_this_project(tmp_path / "dynlint", env)
    user_repo = tmp_path / "user"
    user_repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=user_repo, env=env, check=True)

    def try_repo(source: str) -> subprocess.CompletedProcess:
        (user_repo / "model.py").write_text(source)
        subprocess.run(["git", "add", "-A"], cwd=user_repo, env=env, check=True)
        return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(hooks_repo), "dynlint",
                               "--all-files", "--color", "never"],
                              cwd=user_repo, env=env, capture_output=True, text=True, timeout=240)

    bad = try_repo(BAD)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "dynlint" in bad.stdout and "Failed" in bad.stdout
    assert "model.py:6:8: DYN101 branch on a tensor value `x.sum() > 0`" in bad.stdout

    fixed = try_repo(FIXED)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "Passed" in fixed.stdout and "DYN" not in fixed.stdout
