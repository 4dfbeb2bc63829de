"""A repository built to flood or take over what `dynlint check` prints: the output stays small, and nothing from
the project reaches the terminal or the GitHub Actions log as a control sequence or a workflow command. Each
test is a proof of concept of the attack, run through the CLI, with the real findings still reported."""
import json
import os
import re
import sys

import pytest

from conftest import write_tree

# what must never come out raw: C0 controls but tab and newline, DEL, C1, bidi embeddings/overrides/isolates
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def test_a_huge_line_with_many_findings_prints_a_window_around_each(cli, tmp_path):
    """100 findings on one line of 50 KB (a packed blob, minified code): every finding printed the whole line
    (5.2 MB of text, and as much in the HTML report); now a window of the line around each span."""
    n = 100
    items = ", ".join(["x.item()"] * n)
    write_tree(tmp_path, {"model.py": f"import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
                                      f"        y = [{items}]  # {'A' * 50_000}\n        return y\n"})
    r = cli("check", ".", "--no-cache", "--report", tmp_path / "r.html", cwd=tmp_path)
    assert r.returncode == 1 and r.stdout.count("DYN201") == n
    assert len(r.stdout) < 100_000, len(r.stdout)
    assert max(map(len, r.stdout.splitlines())) < 200
    assert (tmp_path / "r.html").stat().st_size < 500_000
    # the caret stays under its span: the 50th `x.item()`, in a window cut at both ends
    lines = r.stdout.splitlines()
    at = lines.index(next(line for line in lines if line.startswith(f"model.py:6:{14 + 10 * 49}: DYN201")))
    shown, caret = lines[at + 1], lines[at + 2]
    assert "| ..." in shown and shown.endswith("...")
    start = caret.index("^")
    assert shown[start:start + 9] == "x.item()," and caret[start:] == "^" * 8


def test_a_huge_name_is_quoted_short(cli, tmp_path):
    """A message quoting a 5,000-character function name quoted all of it, in every finding."""
    name = "f" * 5000
    write_tree(tmp_path, {"model.py": f"import torch\n\n\n@torch.compile\ndef {name}(x, y=None):\n    return x + y\n\n\n"
                                      f"def main(x):\n    {name}(x)\n    {name}(x, x)\n"})
    findings = json.loads(cli("check", ".", "--format", "json", "--no-cache", cwd=tmp_path).stdout)["findings"]
    assert [(f["code"], f["line"], [r["line"] for r in f["related"]]) for f in findings] == [("DYN505", 6, [11, 10])]
    assert len(findings[0]["message"]) < 400 and "and `None` at line 10" in findings[0]["message"]


# A file name that is a GitHub workflow command on a line of its own, one that is one at the start of a line,
# one with terminal escapes and a bidi override; a source line that retitles the terminal, erases the line,
# reverses text and carries the runner's legacy `##[command]` form (read anywhere in a line).
NAMES = ["a\n::error file=x.py,line=1::owned\n.py", "::error file=y.py,line=1::owned.py", "b\x1b[2Kc\u202e.py"]
BODY = ("import torch\n\n\n@torch.compile\ndef f(x):\n"
        "    y = x.item()  # \x1b]0;owned\x07\x1b[2K \u202e gnp.exe \u202c ##[error]legacy \x85 \u2066\n"
        "    return y\n")


@pytest.mark.skipif(sys.platform == "win32", reason="such file names are not allowed on Windows")
@pytest.mark.parametrize("fmt", ["text", "github"])
def test_names_and_source_lines_cannot_drive_the_terminal_or_the_actions_log(cli, tmp_path, fmt):
    write_tree(tmp_path, {name: BODY for name in NAMES})
    r = cli("check", ".", "--no-cache", "--format", fmt, cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert not UNSAFE.search(r.stdout), UNSAFE.findall(r.stdout)
    assert "##[" not in r.stdout
    commands = [line for line in r.stdout.splitlines() if line.lstrip().startswith("::")]
    if fmt == "text":
        assert commands == []
        assert r.stdout.count(": DYN201 `.item()` copies a tensor value") == 3
        assert "a\\n::error file=x.py,line=1::owned\\n.py:6:9: DYN201" in r.stdout      # shown, escaped
        assert "./::error file=y.py,line=1::owned.py:6:9: DYN201" in r.stdout
        assert "b\\x1b[2Kc\\u202e.py:6:9: DYN201" in r.stdout
        assert "# \\x1b]0;owned\\x07\\x1b[2K \\u202e gnp.exe \\u202c #\\x23[error]legacy \\x85 \\u2066" in r.stdout
    else:       # the findings' own annotations, and nothing else
        assert len(commands) == 3 and all(c.startswith("::warning file=") and "title=DYN201" in c for c in commands)
        assert "::warning file=a\\n%3A%3Aerror file=x.py%2Cline=1%3A%3Aowned\\n.py,line=6,col=9," in r.stdout
        assert "::warning file=b\\x1b[2Kc\\u202e.py,line=6," in r.stdout


# ---- -o and --report on devices and pipes: written to, never replaced ------------------------------------
PROJECT = {"pyproject.toml": "[tool.dynlint]\n", "model.py": "import torch\n\n@torch.compile\ndef f(x):\n    return x.item()\n"}


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="making a device node needs root")
@pytest.mark.parametrize("flag", ["-o", "--report"])
def test_a_device_named_by_o_stays_a_device(cli, tmp_path, flag):
    """`-o /dev/null` run as root (CI containers) renamed a regular file over the device: here on a private
    node of the same device (1, 3), so that a failure cannot break the machine's own /dev/null."""
    import stat
    write_tree(tmp_path, PROJECT)
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    r = cli("check", ".", flag, str(null), cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert stat.S_ISCHR(os.stat(null).st_mode) and os.stat(null).st_rdev == os.makedev(1, 3)
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".null.")]     # no temporary left


@pytest.mark.skipif(not os.path.exists("/dev/stdout"), reason="/dev/stdout")
def test_o_dev_stdout_into_a_pipe_prints_the_report(cli, tmp_path):
    write_tree(tmp_path, PROJECT)
    r = cli("check", ".", "-o", "/dev/stdout", "--format", "json", cwd=tmp_path)      # stdout is a pipe here
    assert r.returncode == 1, r.stderr
    assert '"DYN201"' in r.stdout


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
def test_o_into_a_named_pipe_writes_to_its_reader(cli, tmp_path):
    import threading
    write_tree(tmp_path, PROJECT)
    fifo = tmp_path / "report.pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    r = cli("check", ".", "-o", str(fifo), cwd=tmp_path)
    reader.join(timeout=60)
    assert r.returncode == 1, r.stderr
    assert got and "model.py:5:12: DYN201" in got[0]
    assert os.path.exists(fifo) and not os.path.isfile(fifo)


def test_configuration_errors_show_control_characters_escaped(cli, tmp_path):
    """An unknown key named with an escape sequence and a workflow command: the error quoted the key raw, so a
    repository's pyproject.toml drove the terminal (or the Actions log) of whoever ran dynlint on it."""
    write_tree(tmp_path, {"pyproject.toml": '[tool.dynlint]\n"\\u001b[2J##[error]owned" = 1\n', "m.py": "x = 1\n"})
    r = cli("check", ".", "--no-cache", cwd=tmp_path)
    assert r.returncode == 2 and "owned" in r.stderr
    assert not UNSAFE.search(r.stderr) and "##[" not in r.stderr and "\\x1b" in r.stderr


def test_flake8_messages_show_control_characters_escaped(tmp_path):
    """A finding's message quotes the code (`branch on a tensor value ...`): through flake8 the raw escape
    sequence of a string in that code reached the terminal."""
    import subprocess
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n",
                          "m.py": 'import torch\n\n\n@torch.compile\ndef f(x):\n'
                                  '    if x.sum() > len("\x1b[2J"):\n        return x\n    return -x\n'})
    r = subprocess.run([sys.executable, "-m", "flake8", "--select", "DYN", "m.py"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert "DYN101" in r.stdout, r.stdout + r.stderr
    assert not UNSAFE.search(r.stdout) and "\\x1b" in r.stdout


@pytest.mark.skipif(os.name != "posix", reason="a file name with a control character")
def test_diff_headers_quote_a_file_name_as_git_does(cli, tmp_path):
    """`--diff` wrote the file name raw into its `---`/`+++` headers: a name with an escape sequence or a line
    break reached the terminal. It is now quoted as git quotes one, and `git apply` still applies the diff."""
    import subprocess
    name = "we\x1bird.py"
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n",
                          name: "import torch\n\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x * 2\n"})
    r = cli("check", ".", "--diff", "--no-cache", cwd=tmp_path)
    assert '--- "a/we\\033ird.py"' in r.stdout and not UNSAFE.search(r.stdout), r.stdout
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    applied = subprocess.run(["git", "apply", "-"], cwd=tmp_path, input=r.stdout, capture_output=True, text=True)
    assert applied.returncode == 0, applied.stderr
    assert "is_compiling" in (tmp_path / name).read_text()
