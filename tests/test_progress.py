"""Progress bars: on stderr, for large static runs and for --verify; silent off a terminal and under CI; tqdm is
imported only when a bar is drawn. The CLI tests run `dynlint` with its stderr on a pseudo-terminal."""
import io
import os
import pty
import subprocess
import sys
import textwrap

import pytest

from conftest import write_tree
from dynlint.report import progress


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def run_on_pty(args, cwd, env=None, columns=100):
    """Run `python -m dynlint ARGS` with stderr on a pty; (exit code, what the terminal showed, stdout)."""
    leader, follower = pty.openpty()
    if columns:
        import fcntl
        import struct
        import termios
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    base = {k: v for k, v in os.environ.items() if k != "CI"}      # CI itself runs with CI=true
    p = subprocess.Popen([sys.executable, "-m", "dynlint", *args], cwd=cwd, stdout=subprocess.PIPE,
                         stderr=follower, env={**base, "NO_COLOR": "1", **(env or {})})
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:                # EIO: the child closed its end
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    stdout = p.stdout.read()
    p.wait(timeout=600)
    return p.returncode, shown.decode(errors="replace"), stdout.decode()


@pytest.fixture(scope="module")
def many_files(tmp_path_factory):
    """A project with more files than progress.LARGE_RUN, all clean."""
    root = tmp_path_factory.mktemp("many")
    files = {"pyproject.toml": "[tool.dynlint]\n"}
    for i in range(progress.LARGE_RUN + 50):
        files[f"pkg/m{i}.py"] = f"import torch\n\n@torch.compile\ndef f{i}(x):\n    return x * 2\n"
    return write_tree(root, files)


# ---- when bars are shown -----------------------------------------------------------------------------------
@pytest.mark.parametrize("ci, expected", [(None, True), ("1", False), ("true", False), ("false", True), ("", True)])
def test_wanted_on_a_terminal_unless_ci(monkeypatch, ci, expected):
    monkeypatch.delenv("CI", raising=False)
    if ci is not None:
        monkeypatch.setenv("CI", ci)
    assert progress.wanted(FakeTerminal()) is expected


def test_not_wanted_off_a_terminal(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    assert not progress.wanted(io.StringIO())
    assert not progress.wanted(object())          # no isatty at all


def test_stage_bars_only_for_large_runs():
    small = FakeTerminal()
    with progress.StageBars(min_total=100, stream=small) as bars:
        for done in range(11):
            bars("reading", done, 10)
    assert small.getvalue() == ""

    large = FakeTerminal()
    with progress.StageBars(min_total=100, stream=large) as bars:
        for done in range(301):
            bars("reading", done, 300)
        for done in range(6):             # a later stage of a large run shows however small it is
            bars("checking", done, 5)
    shown = large.getvalue()
    assert "reading" in shown and "/300" in shown and "checking" in shown and "/5" in shown


def test_example_bar_names_the_running_example():
    term = FakeTerminal()                 # no fileno: the bar falls back to 80 columns
    with progress.ExampleBar(stream=term) as bar:
        bar("tinygpt_forward", 0, 2)
        bar("tinygpt_forward", 1, 2)
        bar("rope", 1, 2)
        bar("rope", 2, 2)
    shown = term.getvalue()
    assert "verify" in shown and "tinygpt_forward" in shown and "rope" in shown and "2/2" in shown


# ---- the CLI, as a user runs it ------------------------------------------------------------------------------
def test_large_static_run_draws_a_bar_on_a_terminal(many_files):
    code, shown, stdout = run_on_pty(["check", ".", "--no-cache"], many_files)
    assert code == 0, stdout
    assert "reading" in shown and f"/{progress.LARGE_RUN + 50}" in shown and "%|" in shown
    assert "reading" not in stdout                    # the bar never touches the report


def test_terminal_of_unknown_width_still_gets_a_bar(many_files):
    code, shown, _ = run_on_pty(["check", ".", "--no-cache"], many_files, columns=0)
    assert code == 0 and "reading" in shown


@pytest.mark.parametrize("env, args", [({"CI": "1"}, []), ({}, ["--quiet"])])
def test_no_bar_under_ci_or_quiet(many_files, env, args):
    code, shown, _ = run_on_pty(["check", ".", "--no-cache", *args], many_files, env=env)
    assert code == 0 and "reading" not in shown and "%|" not in shown


def test_no_bar_when_stderr_is_not_a_terminal(many_files):
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    r = subprocess.run([sys.executable, "-m", "dynlint", "check", ".", "--no-cache"], cwd=many_files,
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0 and r.stderr == ""


def test_small_run_does_not_import_tqdm(tmp_path):
    """Start-up of the static path stays lean: tqdm loads only when a bar is drawn."""
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "m.py": "import torch\n"})
    probe = ("import sys; from dynlint.cli import main; main(['check', '.', '--no-cache']); "
             "sys.stdout.write('tqdm loaded: %s' % ('tqdm' in sys.modules))")
    leader, follower = pty.openpty()                   # a terminal, so only the size of the run decides
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    r = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, stdout=subprocess.PIPE, stderr=follower,
                       env=env, timeout=120)
    os.close(follower)
    os.close(leader)
    assert r.stdout.decode().endswith("tqdm loaded: False")


VERIFY_MODEL = textwrap.dedent("""
    import torch

    @torch.compile
    def clip(x):
        if x.sum() > 0:
            x = x - 1
        return x * 2
""")

VERIFY_EXAMPLES = textwrap.dedent("""
    import torch
    import dynlint
    from model import clip

    @dynlint.example
    def positive_input():
        return clip, [(torch.ones(8),)]
""")


@pytest.mark.dynamo
@pytest.mark.slow
def test_verify_bar_names_the_example_and_report_is_written(tmp_path):
    pytest.importorskip("torch")
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "model.py": VERIFY_MODEL,
                          "dynlint_examples.py": VERIFY_EXAMPLES})
    code, shown, stdout = run_on_pty(["check", ".", "--verify", "--device", "cpu", "--report", "report.html"],
                                     tmp_path)
    assert code == 1, stdout                           # DYN101 at the branch
    assert "verify" in shown and "positive_input" in shown and "example" in shown
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert 'data-v="positive_input"' in page and 'id="breaks"' in page and "model.py:6" in page
