"""Committed symbolic links: nothing outside the project is read (and printed) or written through them."""
import json
import os
import sys

import pytest

from conftest import write_tree

MODEL = "import torch\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x.item()\n"
SECRET_MODEL = "import torch\n\n@torch.compile\ndef f(x):\n    return x.item()  # AWS_SECRET=hunter2\n"


@pytest.fixture
def repo(tmp_path):
    project = write_tree(tmp_path / "repo", {"pyproject.toml": "[tool.dynlint]\n", "model.py": MODEL})
    home = write_tree(tmp_path / "home", {".bashrc": "# the user's\n", "creds.py": SECRET_MODEL})
    return project, home, {"XDG_CACHE_HOME": str(tmp_path / "user-cache"), "HOME": str(home)}


@pytest.mark.parametrize("flag", ["-o", "--report"])
def test_a_report_is_never_written_through_a_committed_link(cli, repo, flag):
    project, home, env = repo
    os.symlink(home / ".bashrc", project / "dynlint.sarif")
    r = cli("check", ".", "--format", "sarif", flag, "dynlint.sarif", cwd=project, env=env)
    assert r.returncode == 2 and "refusing to write dynlint.sarif: a symbolic link leads out of the project" in r.stderr
    assert (home / ".bashrc").read_text() == "# the user's\n"


def test_a_report_is_never_written_into_a_committed_folder_link(cli, repo):
    """The workflow writes `results/dynlint.sarif`; the pull request commits `results -> ~`."""
    project, home, env = repo
    os.symlink(home, project / "results")
    r = cli("check", ".", "-o", "results/.bashrc", cwd=project, env=env)
    assert r.returncode == 2 and "refusing to write" in r.stderr
    assert (home / ".bashrc").read_text() == "# the user's\n"


def test_a_report_path_the_user_names_outside_the_project_is_written(cli, repo, tmp_path):
    project, home, env = repo
    r = cli("check", ".", "-o", str(tmp_path / "out.txt"), cwd=project, env=env)
    assert r.returncode == 1 and "DYN201" in (tmp_path / "out.txt").read_text()


def test_fix_never_rewrites_a_file_outside_the_project(cli, repo):
    project, home, env = repo
    (home / "lib.py").write_text(MODEL)
    os.symlink(home / "lib.py", project / "lib.py")
    r = cli("check", ".", "--fix", cwd=project, env=env)
    assert (home / "lib.py").read_text() == MODEL                    # untouched
    assert "is_compiling" in (project / "model.py").read_text()        # the project's own file is fixed
    assert "skipped lib.py: a symbolic link leads out of the project" in r.stderr


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif"])
def test_a_linked_secret_is_never_read_or_printed(cli, repo, fmt, tmp_path):
    project, home, env = repo
    os.symlink(home / "creds.py", project / "creds.py")
    r = cli("check", ".", "--format", fmt, "--report", str(tmp_path / "r.html"), cwd=project, env=env)
    assert r.returncode == 1
    assert "hunter2" not in r.stdout + r.stderr and "hunter2" not in (tmp_path / "r.html").read_text()
    assert "skipped creds.py: a symbolic link leads out of the project" in r.stderr
    assert "model.py" in r.stdout                                     # the real findings are still reported


@pytest.mark.skipif(not os.path.exists("/proc/self/environ"), reason="procfs")
def test_a_link_to_proc_self_environ_never_prints_the_environment(cli, repo):
    project, home, env = repo
    os.symlink("/proc/self/environ", project / "env.py")
    os.symlink("/proc/self/environ", project / "other.py")
    r = cli("check", ".", "env.py", "other.py", "model.py", cwd=project, env={**env, "CI_TOKEN": "s3cr3t-t0ken"})
    assert "s3cr3t-t0ken" not in r.stdout + r.stderr
    assert "skipped env.py" in r.stderr and "model.py:6:12: DYN201" in r.stdout


@pytest.mark.skipif(sys.platform != "linux", reason="FIFOs and devices")
def test_special_files_are_skipped_with_a_notice(cli, repo):
    project, home, env = repo
    os.mkfifo(project / "pipe.py")
    os.symlink("/dev/zero", project / "zero.py")
    r = cli("check", ".", "pipe.py", "model.py", cwd=project, env=env, timeout=60)
    assert "skipped pipe.py: not a regular file" in r.stderr and "skipped zero.py" in r.stderr
    assert "model.py:6:12: DYN201" in r.stdout


def test_a_skipped_file_with_a_hostile_name_is_announced_escaped(cli, repo):
    project, home, env = repo
    name = "x\x1b]0;owned\x07\n::error file=a.py::owned.py"
    os.symlink(home / "creds.py", os.path.join(project, name))
    r = cli("check", ".", cwd=project, env=env)
    assert "\x1b" not in r.stderr and "\n::error" not in r.stderr
    assert "skipped x\\x1b]0;owned\\x07\\n::error file=a.py::owned.py: a symbolic link" in r.stderr


def test_paths_with_no_project_in_common_leave_no_cache_above_them(cli, tmp_path):
    """`dynlint check /usr/lib/python3 ~/src/x.py`: the root is their deepest common folder, up to `/`, a place
    the user never named: the check runs, and no `.dynlint_cache` is written there (one was)."""
    model = "import torch\n\n@torch.compile\ndef f(x):\n    return x.item()\n"
    write_tree(tmp_path, {"a/one.py": model, "b/two.py": model, "cwd/keep": ""})
    r = cli("check", tmp_path / "a", tmp_path / "b" / "two.py", cwd=tmp_path / "cwd",
            env={"XDG_CACHE_HOME": str(tmp_path / "user-cache")})
    assert r.returncode == 1 and r.stdout.count("DYN201") == 2, r.stdout + r.stderr
    assert not (tmp_path / ".dynlint_cache").exists()
    named = cli("check", tmp_path / "a", cwd=tmp_path / "cwd", env={"XDG_CACHE_HOME": str(tmp_path / "user-cache")})
    assert named.returncode == 1 and (tmp_path / "a" / ".dynlint_cache").is_dir()     # a folder the user named


STDIN_MODEL = "import torch\n\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x\n"


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_stdin_named_as_a_link_out_of_the_project_never_reads_the_outside_file(cli, tmp_path):
    """`--stdin-filename link.py`, where the project's link.py leads to a file outside it: the HTML report quoted
    that file's lines beside the findings of the text actually checked; a link to /dev/zero made the SARIF
    writer read until memory ran out. Reports now quote and hash what was checked, and never follow a link
    out of the project for a snippet."""
    project = tmp_path / "project"
    write_tree(project, {"pyproject.toml": "[tool.dynlint]\n"})
    secret = tmp_path / "secret.txt"
    secret.write_text("".join(f"SECRET {n}\n" for n in range(1, 10)))
    (project / "link.py").symlink_to(secret)
    r = cli("check", "-", "--stdin-filename", "link.py", "--report", project / "r.html", cwd=project,
            input=STDIN_MODEL)
    assert r.returncode == 1 and "DYN301" in r.stdout
    page = (project / "r.html").read_text()
    assert "SECRET" not in page and "print(x)" in page
    (project / "link.py").unlink()
    (project / "link.py").symlink_to("/dev/zero")
    r = cli("check", "-", "--stdin-filename", "link.py", "--format", "sarif", cwd=project, input=STDIN_MODEL,
            timeout=60)
    results = json.loads(r.stdout)["runs"][0]["results"]
    assert [x["ruleId"] for x in results] == ["DYN301"] and results[0]["partialFingerprints"]


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_a_buffer_outside_any_project_is_checked_alone(cli, tmp_path):
    """An editor's file (or `--stdin-filename`) in a folder no configuration file makes a project (a downloads
    folder, a home directory): its whole folder was read, a `.dynlint_cache` written there, and a file not yet
    saved became the root folder itself. Now such a buffer is checked alone and nothing is written."""
    folder = tmp_path / "downloads"
    write_tree(folder, {"other.py": "import torch\n\n@torch.compile\ndef g(x):\n    return x.item()\n"})
    (folder / "evil.py").symlink_to("/etc/hostname")
    work = tmp_path / "elsewhere"
    write_tree(work, {"pyproject.toml": "[tool.dynlint]\n"})
    for cwd in (folder, work):
        r = cli("check", "-", "--stdin-filename", folder / "unsaved.py", cwd=cwd, input=STDIN_MODEL)
        assert r.returncode == 1 and "DYN301" in r.stdout and "1 file checked" in r.stdout, r.stdout + r.stderr
        assert "evil.py" not in r.stderr and "other.py" not in r.stdout
    assert not (folder / ".dynlint_cache").exists() and not (folder / "unsaved.py").exists()
    from dynlint import api
    session = api.Session(str(folder / "unsaved.py"))
    result = session.check({"unsaved.py": STDIN_MODEL.encode()})
    assert [f.code for f in result.findings] == ["DYN301"] and result.files == ["unsaved.py"]
    assert not (folder / ".dynlint_cache").exists()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give a link away")
def test_a_report_never_follows_another_users_link_in_a_shared_sticky_folder(cli, repo, tmp_path):
    """`-o /tmp/report.json` where another user left `/tmp/report.json -> ~/.bashrc`: the kernel would not let
    open() follow it (fs.protected_symlinks), and a rename over the link's target must not either."""
    project, home, env = repo
    shared = tmp_path / "shared-tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    os.symlink(home / ".bashrc", shared / "report.json")
    os.lchown(shared / "report.json", 4242, 4242)
    r = cli("check", ".", "-o", str(shared / "report.json"), cwd=project, env=env)
    assert r.returncode == 2 and "a symbolic link another user made in a shared folder" in r.stderr, r.stderr
    assert (home / ".bashrc").read_text() == "# the user's\n"
    os.lchown(shared / "report.json", 0, 0)           # the user's own link in the same folder is followed
    r = cli("check", ".", "-o", str(shared / "report.json"), cwd=project, env=env)
    assert r.returncode == 1 and "DYN201" in (home / ".bashrc").read_text()


@pytest.mark.skipif(sys.platform != "linux", reason="a race between two threads on Linux's file system")
def test_a_folder_swapped_for_a_link_while_a_report_is_written_never_leads_out(tmp_path):
    """A local user who may write a folder in the project swaps it for a link out of it, again and again, while
    reports are written into it: no write may land outside, whatever the timing (the folder is resolved once and
    the file made and renamed through a handle on it)."""
    import threading

    from dynlint.linter.writes import write_atomic
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / "out").mkdir(parents=True)
    outside.mkdir()
    stop = threading.Event()

    def swap():
        real, aside, link = project / "out", project / "out.real", project / "out.link"
        os.symlink(outside, link)
        while not stop.is_set():
            os.rename(real, aside)
            os.rename(link, real)           # out -> outside
            os.rename(real, link)
            os.rename(aside, real)          # out is a folder again

    racer = threading.Thread(target=swap)
    racer.start()
    try:
        for i in range(3000):
            try:
                write_atomic(project / "out" / "report.json", b"report %d" % i, project)
            except OSError:
                pass                         # refused (UnsafeWrite), or the folder was away
    finally:
        stop.set()
        racer.join()
    assert sorted(p.name for p in outside.iterdir()) == []
