"""Hostile input, broken rules, Ctrl-C and output safety: every file gets a clear answer (its findings, or
one DYN000 saying why not), a bug of ours is a DYN001 naming where it happened (exit 2), and the run goes on.
See docs/reliability.md."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import ROOT, write_tree

GOOD = "import torch\n\n@torch.compile\ndef f(x):\n    return x.item()\n"


def compiled(body: str) -> str:
    """A compiled function with a known finding (DYN201 at line 4), then one that holds `body`."""
    return ("import torch\n@torch.compile\ndef g(x):\n    return x.item()\n\n"
            "@torch.compile\ndef f(x, a, b):\n" + body + "    return x\n")


def json_check(cli, root, *args):
    r = cli("check", ".", "--format", "json", "--no-cache", *args, cwd=root)
    assert "Traceback" not in r.stderr, r.stderr
    doc = json.loads(r.stdout)
    by_file = {}
    for f in doc["findings"]:
        by_file.setdefault(f["path"], []).append(f)
    return r, doc, by_file


# ---- hostile files --------------------------------------------------------------------------------
N = 10_000
HOSTILE = {   # file -> (content, a piece of the one DYN000 message expected)
    "garbage.py": (bytes(range(256)) * 40, "NUL byte"),
    "latin1_no_cookie.py": (b"s = '\xe9t\xe9'\n", "not UTF-8"),
    "parens.py": ("x = " + "(" * N + "1" + ")" * N + "\n", "too many nested parentheses"),
    "lists.py": ("x = " + "[" * N + "]" * N + "\n", "too many nested parentheses"),
    "nested_ifs.py": ("".join(" " * i + "if x:\n" for i in range(1000)) + " " * 1000 + "pass\n",
                      "too many levels of indentation"),
    "nested_defs.py": ("".join(" " * i + f"def f{i}():\n" for i in range(1000)) + " " * 1000 + "pass\n",
                       "too many levels of indentation"),
    "elifs.py": ("if x == 0:\n    pass\n" + "".join(f"elif x == {i}:\n    pass\n" for i in range(1, N)),
                 "for Python's parser"),
    "binop_chain.py": ("x = " + " + ".join(["a"] * N) + "\n", "for Python's parser"),
    # flat for Python's ast, one level per operand for libcst, whose native parser would overflow the C stack
    "and_chain.py": (compiled("    z = " + " and ".join(["a"] * N) + "\n"), "`and` chain of 10000 parts"),
    "dotted_import.py": (compiled("    import " + ".".join(["a"] * N) + "\n"), "dotted name of 10000 parts"),
    # deep enough for Python's parser, too deep for a recursive walk over the tree: that function only
    "deep_binop.py": (compiled("    z = " + " + ".join(["a"] * 2900) + "\n"), "nesting too deep to analyse"),
    "nested_fstring.py": ("x = f\"{f'{1}'}\"\ny = f'{f\"{f'{2}'}\"}'\n", "PEP 701"),
    "pep695.py": ("def first[T](xs: list[T]) -> T:\n    return xs[0]\n\ntype Pair = tuple[int, int]\n",
                  "PEP 695"),
}
if sys.version_info >= (3, 12):      # the newest syntax parses there: no DYN000
    HOSTILE.pop("nested_fstring.py")
    HOSTILE.pop("pep695.py")


@pytest.fixture
def hostile(tmp_path):
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "good.py": GOOD,
                          **{name: content for name, (content, _) in HOSTILE.items()}})
    # deep but legal: 99 nested defs (Python allows 100 indentation levels), 199 nested parentheses
    write_tree(tmp_path, {
        "deep_ok.py": "import torch\n@torch.compile\ndef f(x):\n" + "".join(
            "    " * (i + 1) + f"def g{i}(x):\n" for i in range(98)) + "    " * 99 + "return x.item()\n",
        "parens_ok.py": compiled("    z = " + "(" * 199 + "a" + ")" * 199 + "\n"),
        "match_ok.py": "import torch\n@torch.compile\ndef f(x):\n    match x.dim():\n        case 1:\n"
                       "            return x.item()\n        case _:\n            return x\n",
    })
    (tmp_path / "big.py").write_bytes(b"x = 1\n" * (50 * 2 ** 20 // 6 + 1))      # 50 MiB
    os.symlink("loop_b.py", tmp_path / "loop_a.py")
    os.symlink("loop_a.py", tmp_path / "loop_b.py")
    os.symlink("missing.py", tmp_path / "dangling.py")
    os.symlink("/dev/zero", tmp_path / "zero.py")        # endless: must not be read
    os.mkfifo(tmp_path / "fifo.py")                      # opening it for reading would wait for a writer
    os.mkdir(tmp_path / "sub")
    os.symlink("..", tmp_path / "sub" / "up")            # a folder loop: not followed
    return tmp_path


def test_each_hostile_file_gets_one_clear_dyn000_and_the_run_goes_on(cli, hostile):
    start = time.perf_counter()
    r, doc, by_file = json_check(cli, hostile, "--regions", "all")
    took = time.perf_counter() - start
    expected = {name: why for name, (_, why) in HOSTILE.items()}
    expected.update({
        "big.py": "file too large (50.0 MiB > 10 MiB limit",
        "loop_a.py": "symbolic link loop", "loop_b.py": "symbolic link loop",
        "dangling.py": "broken symbolic link",
    })
    for name, why in expected.items():
        codes = [f["code"] for f in by_file.get(name, [])]
        if name in ("and_chain.py", "dotted_import.py", "deep_binop.py"):
            assert sorted(codes) == ["DYN000", "DYN201"], (name, by_file.get(name))   # the rest of the file
        else:
            assert codes == ["DYN000"], (name, by_file.get(name))
        msg = next(f["message"] for f in by_file[name] if f["code"] == "DYN000")
        assert msg.startswith("cannot parse file: ") and why in msg, (name, msg)
    # correct results where the input is deep but legal, and for the good file
    assert [f["code"] for f in by_file["good.py"]] == ["DYN201"]
    assert [(f["code"], f["line"]) for f in by_file["deep_ok.py"]] == [("DYN201", 102)]
    assert [(f["code"], f["line"]) for f in by_file["parens_ok.py"]] == [("DYN201", 4)]
    assert [(f["code"], f["line"]) for f in by_file["match_ok.py"]] == [("DYN201", 6)]
    assert not any(f["code"] == "DYN001" for f in doc["findings"])
    assert set(by_file) == set(expected) | {"good.py", "deep_ok.py", "parens_ok.py", "match_ok.py"}
    assert {e["path"] for e in doc["errors"]} == set(expected) - {"and_chain.py", "dotted_import.py",
                                                                  "deep_binop.py"}
    assert not any(p.startswith("sub/") for p in doc["files"])          # the folder loop was not followed
    # a link out of the project (/dev/zero) and a FIFO are skipped unread, with a notice
    assert "dynlint: warning: skipped zero.py: a symbolic link leads out of the project" in r.stderr
    assert "dynlint: warning: skipped fifo.py: not a regular file" in r.stderr
    assert r.returncode == 1
    assert took < 60


def test_the_html_report_never_reads_what_is_not_a_regular_file(cli, hostile):
    """The report shows snippets: it must not wait on the FIFO or read /dev/zero for ever."""
    r = cli("check", ".", "--regions", "all", "--report", "r.html", cwd=hostile, timeout=120)
    assert r.returncode == 1, r.stderr
    page = (hostile / "r.html").read_text(encoding="utf-8")
    assert "fifo.py" not in page and "zero.py" not in page        # skipped unread
    assert "x.item()" in page and "dangling.py" in page           # good.py's snippet, a DYN000


def test_the_size_limit_is_a_knob(cli, tmp_path):
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\nmax-file-size = 0.001\n",
                          "good.py": GOOD + "# padding\n" * 200})          # 2 KiB > 0.001 MiB
    r, _, by_file = json_check(cli, tmp_path)
    assert "file too large (0.0 MiB > 0.001 MiB limit" in by_file["good.py"][0]["message"]
    r, _, by_file = json_check(cli, tmp_path, "--max-file-size", "0")          # 0: no limit
    assert [f["code"] for f in by_file["good.py"]] == ["DYN201"]
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\nmax-file-size = 'big'\n")
    r = cli("check", ".", cwd=tmp_path)
    assert r.returncode == 2 and "'max-file-size' must be a non-negative number" in r.stderr


def test_form_feeds_lone_cr_and_unicode_line_separators_keep_line_numbers(cli, tmp_path):
    # str.splitlines() also breaks at \f, \x1c-\x1e, \x85 and \u2028; Python does not
    src = ("import torch\n\x0c\n# \u2028 \x1c \x85 in a comment\r@torch.compile\r\ndef f(x):\n"
           "\x0c    if x.sum() > 0:\n        s = '\u2028'\n"
           "\x0c    a = x.item()  # noqa: DYN201\n    return x.item()\n")
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "ff.py": src})
    r, _, by_file = json_check(cli, tmp_path)
    assert [(f["code"], f["line"], f["column"]) for f in by_file["ff.py"]] == [("DYN101", 6, 8), ("DYN201", 9, 11)]
    r = cli("check", ".", "--no-cache", cwd=tmp_path)
    assert "     9 |     return x.item()\n" in r.stdout          # the snippet shows the right line


def test_symlink_to_a_file_inside_is_checked_where_the_link_is(cli, tmp_path):
    project = write_tree(tmp_path / "project", {"pyproject.toml": "[tool.dynlint]\n", "real/model.py": GOOD})
    os.symlink(project / "real" / "model.py", project / "linked.py")
    r, doc, by_file = json_check(cli, project)
    # not skipped (the link stays in the project): checked once, under the name of the file it is
    assert doc["files"] == ["real/model.py"] and [f["code"] for f in by_file["real/model.py"]] == ["DYN201"]
    assert "warning" not in r.stderr


@pytest.mark.skipif(sys.platform != "linux", reason="file names of arbitrary bytes")
@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_file_names_that_are_not_utf8_or_hold_newlines(cli, tmp_path, fmt):
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n"})
    for name in (b"bad\xffname.py", b"new\nline.py"):
        with open(os.path.join(os.fsencode(tmp_path), name), "wb") as f:
            f.write(GOOD.encode())
    r = cli("check", ".", "--no-cache", "--format", fmt, cwd=tmp_path, env={"PYTHONIOENCODING": "utf-8"})
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "xffname.py" in r.stdout                 # shown as bad\\xffname.py (SARIF: URL-quoted)


def test_a_function_ending_in_a_line_continuation_completed_by_a_comment(cli, tmp_path):
    """Valid Python (seen in sympy's tests): the function's last line ends with a backslash, the next line is a
    comment. Cut at the function's last line, the unit ended at EOF after the backslash (a false DYN000)."""
    src = "import torch\n\n@torch.compile\ndef f(x):\n    assert x.item() \\\n        # a comment\n\n\ny = 1\n"
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "cont.py": src})
    _, doc, by_file = json_check(cli, tmp_path)
    assert [(f["code"], f["line"]) for f in by_file["cont.py"]] == [("DYN201", 5)]


# ---- files that change under us -------------------------------------------------------------------
def _check(root: Path, **kw):
    from dynlint import api
    from dynlint.linter.config import Config
    return api.check([str(root)], Config(root=root.resolve(), **kw))


def test_a_file_deleted_between_indexing_and_checking(tmp_path, monkeypatch):
    from dynlint.linter import engine
    write_tree(tmp_path, {"a.py": GOOD, "b.py": GOOD})
    index_task = engine._index_task

    def index_then_delete(item):
        out = index_task(item)
        if item[1] == "a.py":
            os.unlink(item[0])
        return out

    monkeypatch.setattr(engine, "_index_task", index_then_delete)
    result = _check(tmp_path)
    got = [(f.path, f.code, f.message) for f in result.findings]
    assert got[0] == ("a.py", "DYN000", "cannot parse file: cannot read file: No such file or directory")
    assert [(p, c) for p, c, _ in got[1:]] == [("b.py", "DYN201")]


def test_a_file_that_vanishes_before_it_is_read(tmp_path):
    from dynlint.analysis import regions
    from dynlint.linter import engine
    from dynlint.linter.config import Config
    from dynlint.rules import all_rules
    write_tree(tmp_path, {"b.py": GOOD})
    files = [(tmp_path / "a.py", "a.py"), (tmp_path / "b.py", "b.py")]        # a.py: listed, never there
    result = engine.run(files, Config(root=tmp_path), all_rules(), analysis=regions)
    assert [(f.path, f.code) for f in result.findings] == [("a.py", "DYN000"), ("b.py", "DYN201")]


def test_permission_denied_in_process(tmp_path, monkeypatch):
    write_tree(tmp_path, {"locked.py": GOOD, "open.py": GOOD})
    real_open = os.open

    def deny(path, *a, **kw):
        if str(path).endswith("locked.py"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *a, **kw)

    monkeypatch.setattr(os, "open", deny)
    result = _check(tmp_path)
    assert [(f.path, f.code, f.message) for f in result.findings][:1] == [
        ("locked.py", "DYN000", "cannot parse file: cannot read file: Permission denied")]
    assert [(f.path, f.code) for f in result.findings][1:] == [("open.py", "DYN201")]


def _can_run_as_nobody() -> bool:
    try:
        return subprocess.run([sys.executable, "-c", "import dynlint"], preexec_fn=_as_nobody, cwd="/",
                              capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _as_nobody():
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)


def test_permission_denied_for_real(tmp_path):
    """chmod 0 stops everyone but root; as root, drop to `nobody` when that user can run this Python."""
    if hasattr(os, "geteuid") and os.geteuid() == 0 and not _can_run_as_nobody():
        pytest.skip("running as root, and user nobody cannot run this Python: a chmod 0 file stays readable")
    project = tmp_path / "p"
    write_tree(project, {"pyproject.toml": "[tool.dynlint]\n", "locked.py": GOOD, "open.py": GOOD})
    (project / "locked.py").chmod(0)
    for p in (tmp_path, project):
        p.chmod(0o777)
    preexec = _as_nobody if os.geteuid() == 0 else None
    r = subprocess.run([sys.executable, "-m", "dynlint", "check", ".", "--no-cache", "--format", "json"],
                       cwd=project, capture_output=True, text=True, preexec_fn=preexec, timeout=120,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    doc = json.loads(r.stdout)
    assert [(f["path"], f["code"]) for f in doc["findings"]] == [("locked.py", "DYN000"), ("open.py", "DYN201")]
    assert "Permission denied" in doc["findings"][0]["message"]


# ---- a rule that raises, a bug outside the rules -----------------------------------------------
RAISING_RULE = textwrap.dedent('''
    import sys
    from dynlint.linter.rule import Rule, register

    @register
    class RaisesOnPurpose(Rule):
        """A test-only rule that fails on every call in bad.py."""
        code, name = "DYN799", "raises-on-purpose"
        message, fix, why = "never reported", "nothing", "it is a test"

        def visit_Call(self, node):
            if self.ctx.path.endswith("bad.py"):
                raise ValueError("boom")

    from dynlint.cli import main
    sys.exit(main(sys.argv[1:]))
''')


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_rule_that_raises_is_isolated(tmp_path, jobs):
    files = {"pyproject.toml": "[tool.dynlint]\n", "bad.py": GOOD, "good.py": GOOD}
    files.update({f"more{i}.py": GOOD for i in range(20)})           # enough files for worker processes
    write_tree(tmp_path, files)

    def run(*extra):
        r = subprocess.run([sys.executable, "-c", RAISING_RULE, "check", ".", "--no-cache", "-j", jobs,
                            "--format", "json", *extra], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert "Traceback" not in r.stderr, r.stderr
        return r, json.loads(r.stdout)["findings"]

    r, findings = run()
    assert r.returncode == 2                                          # an internal error is not a clean run
    assert "dynlint: error: 1 internal error (DYN001, a bug of dynlint's) in bad.py" in r.stderr   # exit 2 says why
    bad = [(f["code"], f["line"]) for f in findings if f["path"] == "bad.py"]
    assert bad == [("DYN001", 5), ("DYN201", 5)]                      # the other rules' finding is kept
    err = next(f for f in findings if f["code"] == "DYN001")
    assert err["message"] == "internal error in rule DYN799 (raises-on-purpose): ValueError: boom"
    assert all([f["code"] for f in findings if f["path"] == p] == ["DYN201"] for p in ["good.py", "more0.py"])
    _, findings = run("--debug")
    err = next(f for f in findings if f["code"] == "DYN001")
    assert "Traceback (most recent call last)" in err["message"] and "in visit_Call" in err["message"]


def test_a_bug_outside_the_rules_is_a_dyn001_for_that_file_only(tmp_path, monkeypatch, capsys):
    from dynlint import cli
    from dynlint.linter import sources
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "a.py": GOOD, "b.py": GOOD})
    build_index = sources.build_index

    def flaky(tree, path, *a):
        if path == "a.py":
            raise KeyError("index bug")
        return build_index(tree, path, *a)

    monkeypatch.setattr(sources, "build_index", flaky)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["check", ".", "--no-cache", "-j1", "--format", "json"]) == 2
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert [(f["path"], f["code"]) for f in doc["findings"]] == [("a.py", "DYN001"), ("b.py", "DYN201")]
    assert "internal error (DYN001, a bug of dynlint's) in a.py" in err and "Exit status 2" in err
    assert doc["findings"][0]["message"] == "internal error in the index pass: KeyError: 'index bug'"


def test_a_bug_in_the_whole_project_pass_is_a_dyn001_not_a_traceback(tmp_path, monkeypatch, capsys):
    from dynlint import cli
    from dynlint.analysis import regions
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "a.py": GOOD, "broken.py": "def f(:\n"})

    def broken(*a):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(regions, "find_regions", broken)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["check", ".", "--no-cache", "-j1", "--format", "json"]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert [(f["path"], f["code"]) for f in doc["findings"]] == [(".", "DYN001"), ("broken.py", "DYN000")]
    assert doc["findings"][0]["message"] == ("internal error in the region analysis: "
                                             "RecursionError: maximum recursion depth exceeded")


# ---- output safety ----------------------------------------------------------------------------
def test_write_atomic_leaves_the_old_report_and_no_temp_file_when_interrupted(tmp_path, monkeypatch):
    from dynlint.linter.writes import write_atomic
    target = tmp_path / "report.json"
    target.write_text("old report\n")

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(str(target), b"new report\n" * 1000, None)
    assert target.read_text() == "old report\n" and os.listdir(tmp_path) == ["report.json"]


def test_write_atomic_gives_the_report_normal_permissions(tmp_path):
    from dynlint.linter.writes import write_atomic
    umask = os.umask(0o022)
    try:
        write_atomic(str(tmp_path / "new.json"), b"{}\n", None)
    finally:
        os.umask(umask)
    assert (tmp_path / "new.json").stat().st_mode & 0o777 == 0o644


def test_an_unwritable_output_is_a_usage_error(cli, tmp_path):
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "good.py": GOOD})
    r = cli("check", ".", "-o", "no/such/folder/report.json", cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.startswith("dynlint: error: cannot write the report: ")


def _group(pgid: int):
    """Live processes of a process group (Linux /proc)."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                out.append(int(d))
    return out


def _sigint_as_in_a_terminal():
    """A job started in the background of a non-interactive shell inherits SIGINT ignored; a terminal's Ctrl-C
    reaches a process that has the default action."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("to", ["the process", "its process group (a terminal's Ctrl-C)"])
def test_ctrl_c_exits_130_with_no_report_no_temp_file_and_nothing_left_running(tmp_path, to):
    method = "".join(f"    def f{i}(self, x):\n        if x.sum() > {i}:\n            print(x.item())\n"
                     f"        return x * {i} + torch.nonzero(x)\n" for i in range(40))
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n",
                          **{f"m{k}.py": f"import torch\n\nclass M{k}(torch.nn.Module):\n{method}"
                             for k in range(200)}})
    proc = subprocess.Popen([sys.executable, "-m", "dynlint", "check", ".", "--regions", "all", "--no-cache",
                             "-j", "2", "--format", "json", "-o", "report.json"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=_sigint_as_in_a_terminal)
    try:
        deadline = time.time() + 60
        while len(_group(proc.pid)) < 3 and time.time() < deadline:     # wait for the worker processes
            assert proc.poll() is None, "finished before it could be interrupted"
            time.sleep(0.02)
        time.sleep(0.5)
        assert proc.poll() is None, "finished before it could be interrupted"
        if to == "the process":
            proc.send_signal(signal.SIGINT)
        else:
            os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130
    assert err.strip().splitlines()[-1] == "dynlint: interrupted" and "Traceback" not in err, err
    time.sleep(0.2)
    assert _group(proc.pid) == []
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("m")) == ["pyproject.toml"]


# ---- found by bench/sweep.py ---------------------------------------------------------------------
def test_re_export_cycles_and_endless_re_export_chains_resolve_to_nothing(cli, tmp_path):
    """A package whose __init__ re-exports a name from a module that imports it back from the package, and
    `from .a import a` with no module a in the project (pkg.a.f -> pkg.a.a.f -> ...): once a RecursionError
    that killed the whole run (seen in site-packages)."""
    write_tree(tmp_path, {
        "pyproject.toml": "[tool.dynlint]\n",
        "pkg/__init__.py": "from .b import X\nfrom .a import a\n",
        "pkg/b.py": "from pkg import X\n",
        "main.py": "import torch\nimport pkg\n\n@torch.compile\ndef f(x):\n    pkg.X(x)\n    pkg.a.f(x)\n"
                   "    return x.item()\n",
    })
    r, doc, by_file = json_check(cli, tmp_path)
    assert [(f["path"], f["code"]) for f in doc["findings"]] == [("main.py", "DYN201")]


def test_an_analysis_that_does_not_end_is_cut_off_per_file(tmp_path, monkeypatch):
    """An analysis that blows up on some input (seen: tensor inference on scipy's _tanhsinh.py) must not hang
    the run: each file gets FILE_TIME_LIMIT seconds, then one DYN001 for the rest of it, and the other files
    are checked."""
    from dynlint.analysis import regions
    from dynlint.linter import engine, units
    from dynlint.linter.config import Config
    from dynlint.linter.rule import REGISTRY, Rule
    from dynlint.rules import all_rules

    class NeverEnds(Rule):
        """A test-only rule that loops for ever on slow.py."""
        code, name, message, fix, why = "DYN798", "never-ends", "never reported", "nothing", "it is a test"

        def visit_Call(self, node):
            while self.ctx.path == "slow.py":
                time.sleep(0.01)

    monkeypatch.setitem(REGISTRY, "DYN798", NeverEnds)
    monkeypatch.setattr(units, "FILE_TIME_LIMIT", 0.3)
    write_tree(tmp_path, {"slow.py": GOOD + "\n\n@torch.compile\ndef g(x):\n    return x.item()\n", "fast.py": GOOD})
    files = [(tmp_path / n, n) for n in ("fast.py", "slow.py")]
    result = engine.run(files, Config(root=tmp_path), all_rules(), analysis=regions)
    assert [(f.path, f.line, f.code, f.message) for f in result.findings] == [
        ("fast.py", 5, "DYN201", result.findings[0].message),
        ("slow.py", 3, "DYN001", "internal error in checking lines 3-10: AnalysisTimeout: the file's analysis "
                                 "budget (0.3 s) was spent: these lines were not checked")]


# ---- the verify pass: user code that misbehaves ----------------------------------------------------
HOSTILE_EXAMPLES = '''
import os
import subprocess
import sys
import time

import torch

import dynlint
from model import g


@dynlint.example
def fine():
    return g, [(torch.randn(4),)]


@dynlint.example
def prints_megabytes():
    sys.stdout.write("x" * 30_000_000 + "\\n")
    sys.stderr.write("y" * 30_000_000 + "\\n")

    def noisy(x):
        print("z" * 1_000_000)
        return g(x)

    return noisy, [(torch.randn(4),)]


@dynlint.example
def changes_directory():
    os.chdir("/")
    return g, [(torch.randn(4),)]


@dynlint.example
def spawns_children():
    subprocess.Popen(["sleep", "987601"])
    if os.fork() == 0:
        time.sleep(987603)
        os._exit(0)
    return g, [(torch.randn(4),)]


@dynlint.example
def spawns_a_child_in_its_own_session():
    subprocess.Popen(["sleep", "987602"], start_new_session=True)
    return g, [(torch.randn(4),)]


@dynlint.example
def leaves_an_orphan_without_environment():
    if os.fork() == 0:                   # a daemon: own session, no environment (no tag), its parent gone
        os.setsid()
        subprocess.Popen(["sleep", "987604"], env={}, start_new_session=True)
        os._exit(0)
    os.wait()
    return g, [(torch.randn(4),)]


@dynlint.example
def segfaults():
    import ctypes
    ctypes.string_at(0)


@dynlint.example
def calls_sys_exit():
    sys.exit(0)


@dynlint.example
def exits_hard():
    os._exit(0)


@dynlint.example(timeout=10)
def hangs():
    while True:
        time.sleep(1)


@dynlint.example
def closes_its_output():
    os.close(1)
    os.close(2)
    return g, [(torch.randn(4),)]
'''
SLEEPS = ("987601", "987602", "987603", "987604")


def _sleepers():
    """pids of the `sleep` processes the hostile examples start."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(s.encode() in arg for arg in cmd for s in SLEEPS):
            out.append((int(pid), b" ".join(cmd).decode()))
    return out


@pytest.fixture(scope="module")
def hostile_verify(tmp_path_factory):
    pytest.importorskip("torch")
    root = tmp_path_factory.mktemp("hostile_verify")
    write_tree(root, {"pyproject.toml": "[tool.dynlint]\n[tool.dynlint.verify]\ntimeout = 120\n",
                      "model.py": "import torch\n\n\n@torch.compile\ndef f(x):\n    return x.item()\n\n\n"
                                  "def g(x):\n    return torch.relu(x) * 2\n",
                      "dynlint_examples.py": HOSTILE_EXAMPLES})
    from conftest import run_cli
    r = run_cli("check", ".", "--verify", "--device", "cpu", "--no-cache", "--format", "json", "-o", "out.json",
                cwd=root, timeout=600)
    time.sleep(0.5)
    left = _sleepers()
    yield r, json.loads((root / "out.json").read_text()), left
    for pid, _ in _sleepers():          # whatever escaped: ours to clean up
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


@pytest.mark.dynamo
@pytest.mark.slow
def test_verify_records_each_misbehaving_example_and_keeps_the_static_findings(hostile_verify):
    r, doc, _ = hostile_verify
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-3000:]
    assert ("model.py", 6, "DYN201") in [(f["path"], f["line"], f["code"]) for f in doc["findings"]]
    outcomes = {e["name"]: e["outcome"] for e in doc["verify"]["examples"]}
    assert outcomes == {"fine": "ok", "prints_megabytes": "ok", "changes_directory": "ok", "spawns_children": "ok",
                        "spawns_a_child_in_its_own_session": "ok", "leaves_an_orphan_without_environment": "ok",
                        "segfaults": "crashed",
                        "calls_sys_exit": "error", "exits_hard": "crashed", "hangs": "timeout",
                        "closes_its_output": "error"}
    assert not [cmd for _, cmd in _sleepers() if "987602" not in cmd]    # the worker's process group is gone


@pytest.mark.dynamo
@pytest.mark.slow
def test_verify_leaves_nothing_running_even_a_child_in_its_own_session(hostile_verify):
    """The worker's process group dies with it; a child that started its own session (setsid) left that group
    and is found by the tag it inherited in its environment; an orphan with no environment at all is found as
    a child of dynlint's, which is its subreaper."""
    _, _, left = hostile_verify
    assert left == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc, prctl")
def test_an_orphan_without_environment_is_killed_and_our_own_children_are_not(tmp_path):
    """A worker's grandchild in its own session, with an empty environment (no tag) and its parent gone, is
    re-parented to dynlint (a child subreaper while workers run) and killed; a child dynlint's process had
    before stays, and dynlint is no subreaper afterwards."""
    from dynlint.runtime_check.process import run_isolated

    bystander = subprocess.Popen(["sleep", "987710"])
    try:
        escaper = ("import os, subprocess, sys\n"
                   "if os.fork() == 0:\n"
                   "    os.setsid()\n"
                   "    p = subprocess.Popen(['sleep', '987711'], env={}, start_new_session=True)\n"
                   "    open(sys.argv[1], 'w').write(str(p.pid))\n"
                   "    os._exit(0)\n"
                   "os.wait()\n")
        out = run_isolated([sys.executable, "-c", escaper, str(tmp_path / "pid")], env=dict(os.environ),
                           timeout=60, log_path=str(tmp_path / "log"))
        assert out.returncode == 0, out.log_tail
        pid = int((tmp_path / "pid").read_text())
        assert not Path(f"/proc/{pid}").exists(), Path(f"/proc/{pid}/stat").read_text()    # killed and reaped
        assert bystander.poll() is None
        import ctypes
        flag = ctypes.c_int(-1)
        assert ctypes.CDLL(None).prctl(37, ctypes.byref(flag), 0, 0, 0) == 0 and flag.value == 0  # GET_SUBREAPER
    finally:
        bystander.kill()
        bystander.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_without_the_subreaper_no_child_counts_as_an_orphan(tmp_path, monkeypatch):
    """Where prctl is refused (a sandbox), dynlint adopts nothing: its own children are not swept."""
    from dynlint.runtime_check import process

    monkeypatch.setattr(process, "_subreaper", lambda on: False)
    bystander = subprocess.Popen(["sleep", "987712"])
    try:
        out = process.run_isolated([sys.executable, "-c", "pass"], env=dict(os.environ), timeout=60,
                                   log_path=str(tmp_path / "log"))
        assert out.returncode == 0 and bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_only_the_workers_own_descendants_are_killed(tmp_path):
    """A process of ours that the worker did not start survives; the worker's escaped grandchild does not."""
    from dynlint.runtime_check.process import run_isolated

    bystander = subprocess.Popen(["sleep", "987700"], start_new_session=True)
    try:
        escaper = ("import subprocess, sys; p = subprocess.Popen(['sleep', '987701'], start_new_session=True);"
                   "open(sys.argv[1], 'w').write(str(p.pid))")
        out = run_isolated([sys.executable, "-c", escaper, str(tmp_path / "pid")], env=dict(os.environ),
                           timeout=60, log_path=str(tmp_path / "log"))
        assert out.returncode == 0, out.log_tail
        pid = int((tmp_path / "pid").read_text())
        time.sleep(0.2)
        assert not Path(f"/proc/{pid}/cmdline").exists() or Path(f"/proc/{pid}/cmdline").read_bytes() == b""
        assert bystander.poll() is None                       # still running
    finally:
        bystander.kill()
        bystander.wait()
