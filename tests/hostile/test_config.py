"""A repository's configuration and ignore files: errors are exit 2 with one line, costs stay bounded."""
import os
import subprocess
import sys
import time

import pytest

from conftest import write_tree

MODEL = "import torch\n\n@torch.compile\ndef f(x):\n    return x.item()\n"


def test_a_deeply_nested_toml_is_a_configuration_error(cli, tmp_path):
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\nx = " + "[" * 20000 + "]" * 20000 + "\n",
                          "model.py": MODEL})
    r = cli("check", ".", cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("dynlint: error: invalid TOML in ")
    assert "nested too deeply" in r.stderr


@pytest.mark.skipif(sys.platform != "linux", reason="/proc to count the worker processes")
def test_jobs_in_the_configuration_is_capped_at_the_cores(tmp_path):
    """`jobs = 1000` would start 1000 worker processes at once (a fork bomb for larger numbers)."""
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\njobs = 1000\nregions = 'all'\n",
                          **{f"m{i}.py": MODEL for i in range(64)}})
    proc = subprocess.Popen([sys.executable, "-m", "dynlint", "check", ".", "--no-cache", "-q"], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    most = 0
    while proc.poll() is None:
        children = 0
        for pid in os.listdir("/proc"):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    children += f.read().rsplit(")", 1)[1].split()[1] == str(proc.pid)
            except (OSError, IndexError, ValueError):
                pass
        most = max(most, children)
        time.sleep(0.01)
    assert proc.returncode == 1
    assert most <= len(os.sched_getaffinity(0)) + 1, most         # the pool, and its manager at most


def test_a_huge_gitignore_takes_seconds_not_minutes(cli, tmp_path):
    patterns = "".join(f"generated_{i}_*.py\n" for i in range(40000))
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", ".gitignore": patterns + "skip_me.py\n",
                          **{f"pkg/m{i}.py": MODEL for i in range(200)}})
    start = time.perf_counter()
    r = cli("check", ".", "--no-cache", "-q", cwd=tmp_path)
    took = time.perf_counter() - start
    assert r.returncode == 1 and "Found 200 problems in 200 files" in r.stdout
    assert "only its first 1000 of 40001 patterns are used" in r.stderr
    assert took < 30, took


def test_a_gitignore_pattern_of_many_wildcards_is_left_out_not_matched_for_hours(cli, tmp_path):
    """`a*a*...a*b` (25 wildcards) against a 60-character file name: pathspec's regular expression backtracks
    through every split of the name and the run never ended (a minute was not enough for one file). Such a
    pattern is now left out, with a notice; the usual ones still apply."""
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", ".gitignore": "a*" * 25 + "b\n*_pb2*.py\n",
                          "a" * 60 + ".py": MODEL, "m_pb2_grpc.py": MODEL})
    r = cli("check", ".", "--no-cache", "-q", cwd=tmp_path, timeout=120)      # hours on the previous code
    assert r.returncode == 1 and "Found 1 problem in 1 file" in r.stdout, r.stdout + r.stderr
    assert "1 pattern(s) with more than 2 `*` wildcards are not used" in r.stderr


@pytest.mark.skipif(subprocess.run(["git", "--version"], capture_output=True).returncode != 0, reason="git")
def test_ignored_files_are_the_ones_git_ignores(cli, tmp_path):
    """The .gitignore reader agrees with git itself (`git ls-files --others --exclude-standard`): nested
    .gitignore files, .git/info/exclude, a sub-folder checked on its own."""
    rules = "src/*.py\n!src/keep.py\n\\#hash.py\n/top.py\nbuild_out/\n**/gen/*.py\n*.tmp.py\n# comment\n"
    names = ["src/a.py", "src/keep.py", "src/sub/y.py", "#hash.py", "top.py", "sub/top.py", "build_out/b.py",
             "deep/gen/c.py", "gen/d.py", "x.tmp.py", "ok.py", "sub/ok.py"]
    write_tree(tmp_path, {".gitignore": rules, "pyproject.toml": "[tool.dynlint]\n", "sub/.gitignore": "ok.py\n",
                          **{n: MODEL for n in names + ["local_only.py", "sub/deep/x.py"]}})
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / ".git" / "info").mkdir(exist_ok=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("local_only.py\n")
    out = subprocess.run(["git", "ls-files", "--others", "--exclude-standard"], cwd=tmp_path, capture_output=True,
                         text=True, check=True).stdout.split("\n")
    kept_by_git = sorted(n for n in out if n.endswith(".py"))
    r = cli("check", ".", "--no-cache", "--format", "json", cwd=tmp_path)
    import json
    assert json.loads(r.stdout)["files"] == kept_by_git
    assert "src/sub/y.py" in kept_by_git and "#hash.py" not in kept_by_git      # the cases the old reader got wrong
    assert "local_only.py" not in kept_by_git and "sub/ok.py" not in kept_by_git
    r = cli("check", "sub", "--no-cache", "--format", "json", cwd=tmp_path)       # the root's rules apply too
    assert json.loads(r.stdout)["files"] == [n for n in kept_by_git if n.startswith("sub/")]


@pytest.mark.parametrize("value", ["0", "100", "1e9"])
def test_a_repository_cannot_lift_the_file_size_cap(cli, tmp_path, value):
    """`max-file-size = 0` in a committed pyproject lifted the cap: a 12 MB file from 18 KiB of pack used 4.9 GB.
    A project's configuration may lower the cap; only the command line may lift it."""
    write_tree(tmp_path, {"pyproject.toml": f"[tool.dynlint]\nmax-file-size = {value}\n",
                          "m.py": "import torch\n\n@torch.compile\ndef f(x):\n    return x.item()\n"})
    r = cli("check", ".", cwd=tmp_path)
    assert r.returncode == 2 and "may lower the cap, not lift it" in r.stderr, r.stderr
    lowered = write_tree(tmp_path / "lowered", {"pyproject.toml": "[tool.dynlint]\nmax-file-size = 0.5\n",
                                                "m.py": "import torch\n\n@torch.compile\ndef f(x):\n    return x.item()\n"})
    assert cli("check", ".", cwd=lowered).returncode == 1
    assert cli("check", ".", "--max-file-size", "0", cwd=lowered).returncode == 1     # the user's own choice


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="making a file another user's needs root")
def test_another_users_git_exclude_in_a_parent_folder_hides_nothing(cli, tmp_path):
    """An empty repository another user made in a shared parent folder, whose .git/info/exclude says `*`: every
    file of the project checked below it was ignored (all checks passed on nothing). It is now read only if it is
    the user's, root's or the checked folder's owner's, as configuration files above the project are."""
    shared = tmp_path / "shared"
    write_tree(shared, {".git/info/exclude": "*\n", "proj/pyproject.toml": "[tool.dynlint]\n", "proj/m.py": MODEL})
    for p in (shared / ".git", shared / ".git" / "info", shared / ".git" / "info" / "exclude"):
        os.chown(p, 65534, 65534)
    r = cli("check", ".", "--no-cache", "-q", cwd=shared / "proj")
    assert r.returncode == 1 and "Found 1 problem in 1 file" in r.stdout, r.stdout + r.stderr
    os.chown(shared / ".git" / "info" / "exclude", 0, 0)        # the user's own: applied, as git would
    assert "Found 1 problem" not in cli("check", ".", "--no-cache", "-q", cwd=shared / "proj").stdout


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_a_configuration_file_linked_out_of_the_repository_is_not_read(cli, tmp_path):
    """`pyproject.toml -> ../secret.toml`, out of the checkout: its values (or its parse error) were read and
    quoted back. A configuration file found in the project is read only inside the repository; the run stops
    with exit 2 saying why. One named with --config is the user's choice and is read. (`-> /dev/zero` is no
    regular file: not taken for a configuration file at all, and the run goes on.)"""
    secret = tmp_path / "secret.toml"
    secret.write_text('[tool.dynlint]\nhunter2 = 1\n')
    repo = tmp_path / "repo"
    write_tree(repo, {".git/HEAD": "ref: refs/heads/main\n", "m.py": MODEL})
    (repo / "pyproject.toml").symlink_to(secret)
    r = cli("check", ".", "--no-cache", cwd=repo, timeout=60)
    assert r.returncode == 2 and "symbolic link out of the repository" in r.stderr, r.stderr
    assert "hunter2" not in r.stderr + r.stdout
    named = cli("check", ".", "--no-cache", "--config", secret, cwd=repo)
    assert named.returncode == 2 and "hunter2" in named.stderr      # the user's own file, read as named
    (repo / "pyproject.toml").unlink()
    (repo / "pyproject.toml").symlink_to("/dev/zero")
    assert cli("check", ".", "--no-cache", cwd=repo, timeout=60).returncode == 1
