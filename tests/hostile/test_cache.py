"""A repository ships its own `.dynlint_cache/`: nothing in it can run code, write outside the project or hang
the run. Each test is a proof of concept of the attack, run through the CLI as a user (or CI) would."""
import os
import pickle
import shutil
from pathlib import Path

import pytest

from conftest import write_tree

MODEL = "import torch\n\n@torch.compile\ndef f(x):\n    return x.item()\n\n\n@torch.compile\ndef g(x):\n    print(x)\n    return x\n"


class _Payload:
    """Unpickling this creates the marker file: what a planted pickle would do (with os.system instead)."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return open, (self.marker, "w")


@pytest.fixture
def victim(tmp_path):
    """A project, the victim's own cache folder (the key lives there), and a 'home' with a file to protect."""
    project = write_tree(tmp_path / "repo", {"pyproject.toml": "[tool.dynlint]\n", "model.py": MODEL})
    home = write_tree(tmp_path / "home", {".bashrc": "# the user's\n"})
    return project, home, {"XDG_CACHE_HOME": str(tmp_path / "user-cache"), "HOME": str(home)}


def _cache_files(project: Path):
    return sorted(p for p in (project / ".dynlint_cache").rglob("*.pickle"))


def _learn_names(cli, project, tmp_path, *args):
    """The attacker runs dynlint on the same tree to learn the (predictable) cache file names, then removes
    the folder: the repository ships only what is planted."""
    r = cli("check", ".", *args, cwd=project, env={"XDG_CACHE_HOME": str(tmp_path / "attacker-cache")})
    assert r.returncode == 1, r.stderr
    names = [p.relative_to(project) for p in _cache_files(project)]
    assert names
    shutil.rmtree(project / ".dynlint_cache")
    return names


@pytest.mark.parametrize("args", [(), ("--diff",), ("--format", "sarif", "-o", "out.sarif")],
                         ids=["check", "diff", "sarif"])
def test_a_planted_pickle_runs_nothing(cli, victim, tmp_path, args):
    project, home, env = victim
    marker = tmp_path / "pwned"
    for name in _learn_names(cli, project, tmp_path, *args):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_bytes(pickle.dumps(_Payload(marker)))
    r = cli("check", ".", *args, cwd=project, env=env)
    assert not marker.exists()
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    if not args:
        assert "model.py:5:12: DYN201" in r.stdout           # the real findings are still reported
    # the planted files were overwritten by sealed ones
    assert all(p.read_bytes().startswith(b"dynlint-cache\x00") for p in _cache_files(project))


def test_a_pickle_sealed_under_another_users_key_is_refused(cli, victim, tmp_path):
    """The attacker's own dynlint seals a malicious file with the attacker's key: the victim's key differs."""
    from dynlint.linter import cache

    project, home, env = victim
    marker = tmp_path / "pwned"
    names = _learn_names(cli, project, tmp_path)
    cache.user_key.cache_clear()
    os.environ["XDG_CACHE_HOME"] = str(tmp_path / "attacker-cache")
    try:
        for name in names:
            (project / name).parent.mkdir(parents=True, exist_ok=True)
            folder_rel = Path(*name.parts[1:]).as_posix()
            (project / name).write_bytes(cache.seal(folder_rel, pickle.dumps(_Payload(marker))))
    finally:
        del os.environ["XDG_CACHE_HOME"]
        cache.user_key.cache_clear()
    r = cli("check", ".", cwd=project, env=env)
    assert not marker.exists()
    assert r.returncode == 1 and "model.py:5:12: DYN201" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty"])
def test_damaged_cache_files_are_misses_and_are_rewritten(cli, victim, damage):
    project, home, env = victim
    first = cli("check", ".", cwd=project, env=env)
    for p in _cache_files(project):
        data = p.read_bytes()
        p.write_bytes({"truncated": data[: len(data) // 2], "garbage": os.urandom(len(data)), "empty": b""}[damage])
    again = cli("check", ".", cwd=project, env=env)
    assert again.returncode == 1 and again.stdout == first.stdout and "Traceback" not in again.stderr
    assert all(p.stat().st_size > 50 for p in _cache_files(project))


def test_cache_files_linked_out_of_the_project_are_never_written_through(cli, victim, tmp_path):
    """`.dynlint_cache/<stem>.pickle -> ~/.bashrc`, and a dangling link to a file that must not appear."""
    project, home, env = victim
    names = _learn_names(cli, project, tmp_path)
    (project / ".dynlint_cache").mkdir()
    main = next(n for n in names if len(n.parts) == 2)
    os.symlink(home / ".bashrc", project / main)
    (project / ".dynlint_cache" / ".gitignore").symlink_to(home / "authorized_keys")       # dangling
    r = cli("check", ".", cwd=project, env=env)
    assert r.returncode == 1 and "model.py:5:12: DYN201" in r.stdout, r.stderr
    assert (home / ".bashrc").read_text() == "# the user's\n"
    assert not (home / "authorized_keys").exists()
    assert "cache not written" in r.stderr and "symbolic link leads out of the project" in r.stderr


def test_a_cache_folder_linked_out_of_the_project_is_not_used(cli, victim):
    project, home, env = victim
    (home / "cache").mkdir()
    os.symlink(home / "cache", project / ".dynlint_cache")
    r = cli("check", ".", cwd=project, env=env)
    assert r.returncode == 1 and "model.py:5:12: DYN201" in r.stdout
    assert list((home / "cache").iterdir()) == []
    assert "cache not used" in r.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
@pytest.mark.parametrize("kind", ["fifo", "tty"])
def test_a_cache_file_that_is_a_fifo_or_a_terminal_link_does_not_hang_the_run(cli, victim, tmp_path, kind):
    project, home, env = victim
    for name in _learn_names(cli, project, tmp_path):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(project / name) if kind == "fifo" else os.symlink("/dev/tty", project / name)
    r = cli("check", ".", cwd=project, env=env, timeout=60)
    assert r.returncode == 1 and "model.py:5:12: DYN201" in r.stdout, r.stderr


@pytest.mark.parametrize("value", ["/tmp/elsewhere", "../outside", "sub/../../outside"])
def test_the_configuration_cannot_move_the_cache_out_of_the_project(cli, victim, value):
    project, home, env = victim
    (project / "pyproject.toml").write_text(f"[tool.dynlint]\ncache-dir = {value!r}\n")
    r = cli("check", ".", cwd=project, env=env)
    assert r.returncode == 2 and "'cache-dir' must be a relative path inside the project" in r.stderr
    assert not (project.parent / "outside").exists()


def test_the_command_line_may_put_the_cache_anywhere(cli, victim, tmp_path):
    """--cache-dir is the user's own choice, not the repository's."""
    project, home, env = victim
    r = cli("check", ".", "--cache-dir", str(tmp_path / "mine"), cwd=project, env=env)
    assert r.returncode == 1 and list((tmp_path / "mine").glob("*.pickle"))


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root to plant another user's file")
def test_another_users_pyproject_above_the_tree_neither_configures_nor_roots_the_run(cli, tmp_path):
    """A shared scratch folder: someone else's pyproject.toml (with a [tool] table) one level up."""
    shared = tmp_path / "shared"
    write_tree(shared, {"pyproject.toml": "[tool.dynlint]\nselect = ['DYN9']\n"})
    os.chown(shared / "pyproject.toml", 4242, 4242)
    mine = write_tree(shared / "mine", {"model.py": MODEL})
    os.chown(mine, 4243, 4243)                 # a checkout owned by a third user: only root and it are trusted
    r = cli("check", ".", cwd=mine, env={"XDG_CACHE_HOME": str(tmp_path / "c")})
    assert r.returncode == 1 and "model.py:5:12: DYN201" in r.stdout, r.stdout + r.stderr
    assert not (shared / ".dynlint_cache").exists() and (mine / ".dynlint_cache").is_dir()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give files away")
def test_another_users_empty_git_beside_their_pyproject_does_not_move_the_root(cli, tmp_path):
    """The same shared folder with an empty `.git` beside the other user's pyproject.toml: the climb stopped
    there and took their configuration (select DYN9: every finding hidden, exit 0)."""
    shared = tmp_path / "shared"
    write_tree(shared, {"pyproject.toml": "[tool.dynlint]\nselect = ['DYN9']\n"})
    (shared / ".git").mkdir()
    for p in (shared / "pyproject.toml", shared / ".git"):
        os.chown(p, 4242, 4242)
    mine = write_tree(shared / "mine", {"model.py": MODEL})
    os.chown(mine, 4243, 4243)
    r = cli("check", ".", cwd=mine, env={"XDG_CACHE_HOME": str(tmp_path / "c")})
    assert r.returncode == 1 and "model.py:5:12: DYN201" in r.stdout, r.stdout + r.stderr
    assert not (shared / ".dynlint_cache").exists()


def test_a_pyproject_found_through_a_linked_file_is_not_the_link_targets(cli, victim, tmp_path):
    """`dynlint check link.py`: the root (and so configuration and cache) come from where the link is."""
    project, home, env = victim
    other = write_tree(tmp_path / "other", {"pyproject.toml": "[tool.dynlint]\nselect = ['DYN9']\n", "x.py": MODEL})
    os.symlink(other / "x.py", project / "link.py")
    r = cli("check", "link.py", "model.py", cwd=project, env=env)
    assert "model.py:5:12: DYN201" in r.stdout and "skipped link.py" in r.stderr, r.stdout + r.stderr
    assert not (other / ".dynlint_cache").exists()


def test_an_index_file_damaged_under_a_sound_cache_is_indexed_again(cli, victim):
    """The small file is intact, an index blob beside it is not: that file is read again, nothing crashes."""
    project, home, env = victim
    (project / "helpers.py").write_text("def h(x):\n    return x.item()\n")
    (project / "model.py").write_text(MODEL + "\n\nimport helpers\n\n@torch.compile\ndef k(x):\n    return helpers.h(x)\n")
    first = cli("check", ".", cwd=project, env=env)
    (project / "model.py").write_text((project / "model.py").read_text() + "\n\ndef unused():\n    pass\n")
    for blob in (project / ".dynlint_cache").glob("*.indexes/*.pickle"):
        blob.write_bytes(b"dynlint-cache\x00" + b"\x00" * 40)
    again = cli("check", ".", cwd=project, env=env)
    assert again.returncode == 1 and "Traceback" not in again.stderr and "DYN001" not in again.stdout
    assert again.stdout == first.stdout and "helpers.py:2:12: DYN201" in again.stdout     # helpers.py re-read


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root to plant another user's folder")
def test_a_cache_folder_of_another_user_is_not_used_unless_the_project_is_theirs(cli, victim):
    """A shared folder where someone else made `.dynlint_cache/`: not used. A checkout mounted into a container
    (project and cache owned by the same other user, dynlint running as root): used."""
    project, home, env = victim
    (project / ".dynlint_cache").mkdir()
    os.chown(project / ".dynlint_cache", 4242, 4242)
    r = cli("check", ".", cwd=project, env=env)
    assert r.returncode == 1 and "cache not used" in r.stderr and "another user" in r.stderr
    os.chown(project, 4242, 4242)
    r = cli("check", ".", cwd=project, env=env)
    assert r.returncode == 1 and "cache not used" not in r.stderr, r.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
@pytest.mark.parametrize("plant", ["dangling link", "link to a file", "fifo", "folder linked out"])
def test_a_planted_flake8_lock_is_neither_followed_nor_waited_on(victim, plant):
    """flake8's workers take turns through `.dynlint_cache/lock` (linter/cache.py `held`)."""
    import subprocess
    import sys
    pytest.importorskip("flake8")
    project, home, env = victim
    folder = project / ".dynlint_cache"
    if plant == "folder linked out":
        (home / "cache").mkdir()
        os.symlink(home / "cache", folder)
    else:
        folder.mkdir()
        lock = folder / "lock"
        if plant == "fifo":
            os.mkfifo(lock)
        else:
            os.symlink(home / (".bashrc" if plant == "link to a file" else "authorized_keys"), lock)
    r = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "DYN", "."], cwd=project,
                       capture_output=True, text=True, timeout=60, env=dict(os.environ, **env))
    assert r.returncode == 1 and "model.py:5:12: DYN201" in r.stdout, r.stderr
    assert (home / ".bashrc").read_text() == "# the user's\n"
    assert not (home / "authorized_keys").exists()
    assert plant != "folder linked out" or list((home / "cache").iterdir()) == []


def _plant_sealed(project: Path, names, key_home: Path, marker: Path) -> None:
    """Seal a malicious pickle under each cache name with the key that lives under `key_home` (XDG)."""
    from dynlint.linter import cache

    cache.user_key.cache_clear()
    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(key_home)
    try:
        for name in names:
            (project / name).parent.mkdir(parents=True, exist_ok=True)
            (project / name).write_bytes(cache.seal(Path(*name.parts[1:]).as_posix(), pickle.dumps(_Payload(marker))))
    finally:
        os.environ.pop("XDG_CACHE_HOME") if saved is None else os.environ.update(XDG_CACHE_HOME=saved)
        cache.user_key.cache_clear()


@pytest.mark.parametrize("setup", ["HOME in the checkout", "relative XDG_CACHE_HOME"])
def test_a_key_committed_inside_the_checkout_is_never_used(cli, victim, tmp_path, setup):
    """CI containers set HOME to the checkout: a committed `.cache/dynlint/key` and a pickle sealed with it."""
    project, home, env = victim
    marker = tmp_path / "pwned"
    names = _learn_names(cli, project, tmp_path)
    _plant_sealed(project, names, project / ".cache", marker)
    assert (project / ".cache" / "dynlint" / "key").is_file()
    env = dict(env, HOME=str(project), XDG_CACHE_HOME="") if setup == "HOME in the checkout" else \
        dict(env, XDG_CACHE_HOME=".cache")
    r = cli("check", ".", cwd=project, env=env)
    assert not marker.exists()
    assert r.returncode == 1 and "model.py:5:12: DYN201" in r.stdout, r.stdout + r.stderr
    if setup == "HOME in the checkout":
        assert "cache not used" in r.stderr and "lies inside the checked project" in r.stderr


def _own_key(tmp_path, name="shared-cache") -> Path:
    key = tmp_path / name / "dynlint" / "key"
    key.parent.mkdir(parents=True)
    key.write_bytes(os.urandom(32))
    key.chmod(0o600)
    return key


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give a file away")
def test_a_key_another_user_planted_is_refused(cli, victim, tmp_path):
    project, home, env = victim
    key = _own_key(tmp_path)
    marker = tmp_path / "pwned"
    names = _learn_names(cli, project, tmp_path)
    _plant_sealed(project, names, tmp_path / "shared-cache", marker)
    os.chown(key, 65534, 65534)                                # the attacker's (nobody's) key
    r = cli("check", ".", cwd=project, env=dict(env, XDG_CACHE_HOME=str(tmp_path / "shared-cache")))
    assert not marker.exists()
    assert r.returncode == 1 and "model.py:5:12: DYN201" in r.stdout
    assert "the key file belongs to another user" in r.stderr


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
@pytest.mark.parametrize("what", ["folder", "file"])
def test_a_key_others_could_replace_or_read_is_refused(cli, victim, tmp_path, what):
    project, home, env = victim
    key = _own_key(tmp_path)
    marker = tmp_path / "pwned"
    names = _learn_names(cli, project, tmp_path)
    _plant_sealed(project, names, tmp_path / "shared-cache", marker)
    (key.parent.chmod(0o777) if what == "folder" else key.chmod(0o644))
    r = cli("check", ".", cwd=project, env=dict(env, XDG_CACHE_HOME=str(tmp_path / "shared-cache")))
    assert not marker.exists()
    assert r.returncode == 1 and "model.py:5:12: DYN201" in r.stdout
    assert "is open to other users" in r.stderr and "cache not used" in r.stderr
