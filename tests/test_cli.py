"""The CLI as a user runs it: a real subprocess, exit codes, formats, configuration, suppressions."""
import json
import re
import subprocess
import sys
import textwrap

import pytest

from conftest import write_tree


def finding_lines(text: str) -> list:
    """The `path:line:col: CODE ...` lines of the text output."""
    return [line for line in text.splitlines() if re.match(r"\S+:\d+:\d+: DYN\d{3} ", line)]


BAD = textwrap.dedent("""
    import torch

    @torch.compile
    def f(x):
        if x.sum() > 0:
            x = x + 1
        print(x)
        return x.item()
""")


@pytest.fixture
def project(tmp_path):
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "pkg/model.py": BAD,
                          "pkg/clean.py": "import torch\n\n@torch.compile\ndef g(x):\n    return x * 2\n"})
    return tmp_path


def test_text_output_exit_code_and_caret(cli, project):
    r = cli("check", ".", cwd=project)
    assert r.returncode == 1, r.stderr
    assert "pkg/model.py:6:8: DYN101 " in r.stdout
    assert "pkg/model.py:8:5: DYN301 " in r.stdout
    assert "pkg/model.py:9:12: DYN201 " in r.stdout
    # the source line and a caret under the exact span
    assert "     6 |     if x.sum() > 0:\n       |        ^^^^^^^^^^^\n" in r.stdout
    assert "Found 3 problems in 2 files checked." in r.stdout
    assert "\033[" not in r.stdout          # no colour when not a terminal


def test_clean_exit_zero(cli, project):
    r = cli("check", "pkg/clean.py", cwd=project)
    assert r.returncode == 0 and "All checks passed" in r.stdout


def test_exit_zero_flag(cli, project):
    assert cli("check", ".", "--exit-zero", cwd=project).returncode == 0


def test_json_output_schema(cli, project, tmp_path):
    out = tmp_path / "report.json"
    r = cli("check", ".", "--format", "json", "--output", out, cwd=project)
    assert r.returncode == 1 and r.stdout == ""
    doc = json.loads(out.read_text())
    assert doc["schema_version"] == 1 and doc["files_scanned"] == 2
    f = next(f for f in doc["findings"] if f["code"] == "DYN101")
    assert f == {**f, "path": "pkg/model.py", "line": 6, "column": 7, "end_line": 6, "end_column": 18,
                 "name": "tensor-condition-in-branch", "severity": "warning", "chain": []}
    assert "Data-dependent branching" in f["gb_types"] and f["fix"]
    assert doc["summary"]["by_code"] == {"DYN101": 1, "DYN201": 1, "DYN301": 1}


def test_select_ignore_and_statistics(cli, project):
    r = cli("check", ".", "--select", "DYN2,DYN3", "--ignore", "DYN301", "--statistics", cwd=project)
    assert "DYN201" in r.stdout and "DYN101" not in r.stdout and "DYN301" not in r.stdout
    # the table alone (as ruff prints it), with a fixable column; then the summary
    assert re.fullmatch(r"    1  DYN201  (\[\*\]|   ) tensor-item-call", r.stdout.splitlines()[0]), r.stdout
    assert not finding_lines(r.stdout)
    assert "Found 1 problem in 2 files checked." in r.stdout
    r = cli("check", ".", "--select", "DYN1", "--extend-select", "DYN301", "-q", cwd=project)
    assert sorted(line.split()[1] for line in finding_lines(r.stdout)) == ["DYN101", "DYN301"]


def test_config_select_and_per_file_ignores(cli, project):
    (project / "pyproject.toml").write_text(
        '[tool.dynlint]\nignore = ["DYN1"]\nper-file-ignores = { "pkg/*" = ["DYN201"] }\n')
    r = cli("check", ".", "-q", cwd=project)
    assert [line.split()[1] for line in finding_lines(r.stdout)] == ["DYN301"]
    # the command line overrides the configuration
    r = cli("check", ".", "-q", "--ignore", "DYN3", cwd=project)
    assert "DYN101" in r.stdout and "DYN301" not in r.stdout


@pytest.mark.parametrize("table,needle", [
    ('unknown-key = 1', "unknown key 'unknown-key'"),
    ('select = ["DYN999"]', "unknown rule code or prefix 'DYN999'"),
    ('regions = "sometimes"', "unknown value 'sometimes' for 'regions'"),
    ('select = "DYN1', "invalid TOML"),
    ('[tool.dynlint.verify]\ndevice = "tpu"', "unknown value 'tpu' for 'verify.device'"),
])
def test_config_errors_exit_2(cli, project, table, needle):
    (project / "pyproject.toml").write_text("[tool.dynlint]\n" + table + "\n")
    r = cli("check", ".", cwd=project)
    assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr
    assert str(project / "pyproject.toml") in r.stderr           # the file it came from


def test_usage_errors_exit_2(cli, project):
    assert cli("check", "--format", "yaml", cwd=project).returncode == 2
    r = cli("check", "missing_dir", cwd=project)
    assert r.returncode == 2 and "no such file or directory: missing_dir" in r.stderr
    r = cli("check", "--select", "DYN777", cwd=project)
    assert r.returncode == 2 and "DYN777" in r.stderr


SUPPRESSED = textwrap.dedent("""
    import torch

    @torch.compile
    def f(x):
        a = x.item()  # noqa: DYN201
        b = x.item()  # noqa
        c = x.item()  # dynlint: ignore[DYN201]
        d = x.item()  # noqa: DYN101
        e = x.item()  # NOQA:DYN2
        return a + b + c + d + e
""")


def test_suppressions(cli, tmp_path):
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "s.py": SUPPRESSED,
                          "skip.py": "# dynlint: skip-file\n" + BAD})
    r = cli("check", ".", "-q", cwd=tmp_path)
    assert finding_lines(r.stdout) == [
        "s.py:9:9: DYN201 `.item()` copies a tensor value to the host and breaks the graph"]


def test_regions_flag(cli, tmp_path):
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n",
                          "t.py": "def train(x):\n    print(x)\n    return x\n"})
    assert cli("check", ".", cwd=tmp_path).returncode == 0
    r = cli("check", ".", "--regions", "all", "-q", cwd=tmp_path)
    assert r.returncode == 1 and "t.py:2:5: DYN301" in r.stdout


def test_rules_and_rule_commands(cli):
    r = cli("rules")
    assert r.returncode == 0 and "DYN101  tensor-condition-in-branch" in r.stdout
    header, *rows = r.stdout.split("\n\n")[0].splitlines()
    assert header.split() == ["code", "name", "family", "predicts", "fix", "recall", "precision", "on", "real",
                              "code"]
    at, recall_at, measured_at = header.index("fix"), header.index("recall"), header.index("precision")
    fixes = {row.split()[0]: row[at:recall_at].strip() for row in rows}
    from dynlint.rules import recall
    for row in rows:                    # the measured recall, as rules/measured.py has it, where it found any
        m = recall(row.split()[0])
        assert row[recall_at:measured_at].strip() == ("-" if not m or not m[1] else f"{m[0]:.2f} ({m[1]}/{m[2]})"), row
    assert "0.00 (0/" not in r.stdout
    assert fixes["DYN301"] == "safe" and fixes["DYN000"] == "-"          # the fix column: safe, unsafe or none
    from dynlint.rules import is_preview, precision
    for row in rows:                    # the measured precision, as rules/measured.py has it, and preview below 0.9
        code, shown = row.split()[0], row[measured_at:].strip()
        m = precision(code)
        assert shown == ("-" if m is None else f"{m[0]:.2f} ({m[1]}/{m[1] + m[2]})") + \
            (" preview" if is_preview(code) else ""), row
    assert next(row for row in rows if row.startswith("DYN502")).endswith("preview")    # marked by the rule itself
    r = cli("rule", "dyn101")
    assert r.returncode == 0
    for section in ("What it does", "Why is this bad?", "Example", "Use instead", "Data-dependent branching"):
        assert section in r.stdout
    assert cli("rule", "DYN999").returncode == 2


def test_version_and_module_entry(cli):
    r = cli("--version")
    assert r.returncode == 0 and r.stdout.startswith("dynlint ")


def test_colour_on_terminal_only_and_no_color(project):
    import os
    import pty
    import subprocess
    import sys

    def run(env):
        leader, follower = pty.openpty()
        p = subprocess.run([sys.executable, "-m", "dynlint", "check", "."], cwd=project, stdout=follower,
                           stderr=subprocess.PIPE, env={k: v for k, v in {**os.environ, **env}.items() if v})
        os.close(follower)
        out = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        os.close(leader)
        return p.returncode, out.decode()

    code, out = run({"NO_COLOR": ""})
    assert code == 1 and "\033[" in out
    code, out = run({"NO_COLOR": "1"})
    assert code == 1 and "\033[" not in out


@pytest.mark.parametrize("code", ["DYN000", "DYN001", "DYN901", "DYN902", "DYN903"])
def test_dynlints_own_codes_are_documented_like_rules(cli, code):
    """Codes no rule class owns (problems of the run, what --verify saw) have docs of their own (linter/codes.py)."""
    r = cli("rule", code.lower())
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"# {code} ") and "What it does" in r.stdout and "Why is this bad?" in r.stdout
    assert code in cli("rules").stdout


def test_rule_docs_keep_a_plain_star(cli):
    """The text help drops the markdown's emphasis (`*Family:*`), not every `*` (`y * 0.5`, `math.*`)."""
    r = cli("rule", "DYN101")
    assert "Family: data-dependent control flow" in r.stdout and "*Family" not in r.stdout
    assert "y * 0.5" in r.stdout
    assert "math.* functions" in cli("rule", "DYN205").stdout


@pytest.mark.parametrize("args, message", [
    (["--select", ""], "argument --select: no codes given"),
    (["--ignore", " , "], "argument --ignore: no codes given"),
    (["-j", "0"], "argument --jobs/-j: must be a positive number of worker processes, got '0'"),
    (["-j", "-1"], "argument --jobs/-j: must be a positive number of worker processes, got '-1'"),
])
def test_values_that_mean_nothing_are_usage_errors(cli, tmp_path, args, message):
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "m.py": BAD})
    r = cli("check", ".", *args, cwd=tmp_path)
    assert r.returncode == 2 and message in r.stderr, r.stderr


def test_a_report_that_cannot_be_written_names_its_target(cli, tmp_path):
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "m.py": BAD})
    r = cli("check", ".", "-o", "missing/dir/out.json", cwd=tmp_path)
    assert r.returncode == 2 and "missing/dir/out.json" in r.stderr and ".tmp" not in r.stderr, r.stderr


def test_fixable_findings_are_marked_and_counted_as_ruff_does(cli, tmp_path):
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "m.py": BAD})
    r = cli("check", ".", "--no-cache", cwd=tmp_path)
    marked = [line for line in finding_lines(r.stdout) if " [*] " in line]
    doc = json.loads(cli("check", ".", "--no-cache", "--format", "json", cwd=tmp_path).stdout)
    safe = [f for f in doc["findings"] if (f.get("autofix") or {}).get("safety") == "safe"]
    unsafe = [f for f in doc["findings"] if (f.get("autofix") or {}).get("safety") == "unsafe"]
    assert safe and len(marked) == len(safe), r.stdout
    more = f" ({len(unsafe)} more with --unsafe-fixes)" if unsafe else ""
    assert r.stdout.rstrip().endswith(f"[*] {len(safe)} fixable with --fix{more}.")
    stats = cli("check", ".", "--no-cache", "--statistics", cwd=tmp_path).stdout
    assert all(f"{f['code']}  [*] " in stats for f in safe), stats     # the table's fixable column


def test_help_groups_options_and_names_the_exit_codes(cli):
    r = cli("check", "--help")
    assert r.returncode == 0
    for group in ("rule selection:", "output:", "fixes:", "verify (runs your code; needs torch):", "performance:"):
        assert group in r.stdout
    assert "--select CODE,..." in r.stdout and "(default: text)" in r.stdout
    assert "exit status: 0 no findings, 1 findings" in " ".join(r.stdout.split())


@pytest.mark.parametrize("typo, meant", [("--selec", "--select"), ("--unsafe-fix", "--unsafe-fixes"),
                                         ("--sel", "--select")])
def test_a_mistyped_or_abbreviated_flag_is_refused_with_a_suggestion(cli, tmp_path, typo, meant):
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "m.py": BAD})
    r = cli("check", typo, "DYN1", ".", cwd=tmp_path)
    assert r.returncode == 2 and f"(did you mean {meant}?)" in r.stderr, r.stderr


def test_exclude_on_the_command_line(cli, tmp_path):
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\nexclude = ['vendored/*']\n", "a.py": BAD,
                          "gen/b.py": BAD, "vendored/c.py": BAD})
    files = lambda *args: json.loads(cli("check", ".", "--no-cache", "--format", "json", *args,  # noqa: E731
                                         cwd=tmp_path).stdout)["files"]
    assert files() == ["a.py", "gen/b.py"]
    assert files("--extend-exclude", "gen/*") == ["a.py"]                      # in addition to the config's
    assert files("--exclude", "gen/*") == ["a.py", "vendored/c.py"]            # instead of the config's


@pytest.mark.parametrize("name", [".dynlint.toml", "dynlint.toml"])
def test_a_standalone_dynlint_toml_with_top_level_keys(cli, tmp_path, name):
    """As ruff.toml: top-level keys, found before pyproject.toml in a folder; --show-settings names it."""
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\nselect = ['DYN3']\n", name: "select = ['DYN2']\n",
                          "m.py": BAD})
    r = cli("check", ".", "-q", "--no-cache", cwd=tmp_path)
    assert [line.split()[1] for line in finding_lines(r.stdout)] == ["DYN201"]
    shown = cli("check", ".", "--show-settings", cwd=tmp_path)
    assert shown.returncode == 0 and f"Settings path: {tmp_path.resolve() / name}" in shown.stdout
    assert "select = ('DYN2',)" in shown.stdout
    (tmp_path / name).write_text("selct = ['DYN2']\n")
    r = cli("check", ".", cwd=tmp_path)
    assert r.returncode == 2 and f"{name}: unknown key 'selct'" in r.stderr


def test_show_settings_says_where_each_value_came_from(cli, tmp_path):
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\nregions = 'all'\n", "t.py": "x = 1\n"})
    shown = cli("check", ".", "--show-settings", "--select", "DYN1", cwd=tmp_path).stdout
    assert "select = ('DYN1',)  # command line" in shown
    assert f"regions = 'all'  # {tmp_path.resolve() / 'pyproject.toml'}" in shown
    assert "preview = False  # default" in shown


def test_show_files_lists_what_is_checked_and_what_is_left_out_and_why(cli, tmp_path):
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\nextend-exclude = ['gen/*']\n", "pkg/a.py": "",
                          "env/rl.py": "", "gen/out.py": "", ".gitignore": "pkg/scratch.py\n",
                          "pkg/scratch.py": ""})
    r = cli("check", ".", "--show-files", cwd=tmp_path)
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert lines[0] == "pkg/a.py" and not any(line.endswith(".py") and ":" not in line for line in lines[1:])
    assert "left out: env/: excluded by `exclude` / `extend-exclude` (dynlint's default `exclude`; setting " \
           "`exclude` replaces it)" in lines
    assert "left out: gen/out.py: excluded by `exclude` / `extend-exclude`" in lines
    assert "left out: pkg/scratch.py: ignored by git (.gitignore)" in lines


def test_setting_exclude_replaces_the_default_folder_names(cli, tmp_path):
    """As ruff: `exclude = []` walks `env/` and `build/` too (an RL project's environments live in env/);
    version control and dynlint's own cache are never walked."""
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\nexclude = []\n", "env/cartpole.py": BAD,
                          "build/gen.py": "", ".dynlint_cache/x.py": BAD, ".git/hooks/h.py": BAD})
    assert cli("check", ".", "--show-files", cwd=tmp_path).stdout.split("\nleft out")[0].split() == [
        "build/gen.py", "env/cartpole.py"]
    r = cli("check", ".", "-q", "--no-cache", cwd=tmp_path)
    assert {line.split(":")[0] for line in finding_lines(r.stdout)} == {"env/cartpole.py"}
    # with the default exclude, the folder is not walked, but a file of it named explicitly is checked (as
    # ruff), unless --force-exclude (what the pre-commit hook passes) or `force-exclude = true`
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\n")
    assert cli("check", ".", "-q", "--no-cache", cwd=tmp_path).returncode == 0
    r = cli("check", "env/cartpole.py", "-q", "--no-cache", cwd=tmp_path)
    assert {line.split(":")[0] for line in finding_lines(r.stdout)} == {"env/cartpole.py"}
    assert cli("check", "env/cartpole.py", "--force-exclude", "--no-cache", cwd=tmp_path).returncode == 0
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\nforce-exclude = true\n")
    assert cli("check", "env/cartpole.py", "--no-cache", cwd=tmp_path).returncode == 0


def test_respect_gitignore_can_be_turned_off(cli, tmp_path):
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", ".gitignore": "scratch/\n", "scratch/s.py": BAD})
    assert cli("check", ".", "--show-files", cwd=tmp_path).stdout.splitlines() == [
        "left out: scratch/: ignored by git (.gitignore)"]
    assert cli("check", ".", "--show-files", "--no-respect-gitignore", cwd=tmp_path).stdout.splitlines() == [
        "scratch/s.py"]
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\nrespect-gitignore = false\n")
    assert cli("check", ".", "-q", "--no-cache", cwd=tmp_path).returncode == 1


def test_config_flag_reads_a_standalone_file(cli, tmp_path):
    write_tree(tmp_path, {"m.py": BAD, "ci/lint.toml": "select = ['DYN3']\n"})
    r = cli("check", ".", "-q", "--no-cache", "--config", "ci/lint.toml", cwd=tmp_path)
    assert [line.split()[1] for line in finding_lines(r.stdout)] == ["DYN301"], r.stdout + r.stderr


def test_preview_from_the_flag_or_the_configuration(cli, tmp_path):
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "t.py": "x = 1\n"})
    assert "preview = False" in cli("check", ".", "--show-settings", cwd=tmp_path).stdout
    assert "preview = True" in cli("check", ".", "--preview", "--show-settings", cwd=tmp_path).stdout
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\npreview = true\n")
    assert "preview = True" in cli("check", ".", "--show-settings", cwd=tmp_path).stdout
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\npreview = \"yes\"\n")
    r = cli("check", ".", cwd=tmp_path)
    assert r.returncode == 2 and "'preview' must be true or false" in r.stderr


def test_compiled_entry_points_from_the_configuration(cli, tmp_path):
    # a library whose users compile `Sampler.step` from outside it: declared, it is checked like a torch.compile
    # target (and what it calls with it)
    step = ("import torch\n\n\nclass Sampler:\n    def step(self, sample, t):\n        return sample * _scale(t)\n\n\n"
            "def _scale(t):\n    return t.sum().item()\n")
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "pkg/__init__.py": "",
                          "pkg/samplers/__init__.py": "", "pkg/samplers/ddim.py": step})
    assert cli("check", ".", cwd=tmp_path).returncode == 0
    (tmp_path / "pyproject.toml").write_text('[tool.dynlint]\ncompiled = ["pkg.samplers.*:*.step"]\n')
    r = cli("check", ".", cwd=tmp_path)
    assert r.returncode == 1 and "pkg/samplers/ddim.py:10:12: DYN201" in r.stdout, r.stdout
    assert "reached through: Sampler.step -> _scale" in r.stdout
    (tmp_path / "pyproject.toml").write_text('[tool.dynlint]\ncompiled = ["pkg.samplers.Sampler.step"]\n')
    r = cli("check", ".", cwd=tmp_path)
    assert r.returncode == 2 and "'compiled' must be a list of \"module:function\" patterns" in r.stderr


STDIN_PROJECT = {
    "pyproject.toml": "[tool.dynlint]\n", "pkg/__init__.py": "",
    "pkg/helpers.py": "def helper(x):\n    return x.flip(0)\n",
    "pkg/model.py": "import torch.nn as nn\nfrom pkg.helpers import helper\n\n\nclass Net(nn.Module):\n"
                    "    def forward(self, x):\n        return helper(x)\n",
}


def test_stdin_is_checked_as_that_file_of_the_project(cli, tmp_path):
    """An editor's unsaved buffer: the helper is checked because Net.forward in another file calls it; only the
    buffer's findings are reported, with its lines; the file on disk and the cache are left as they were."""
    root = write_tree(tmp_path, STDIN_PROJECT)
    buffer = "def helper(x):\n    print(x)\n    return x.flip(0)\n"
    r = cli("check", "-", "--stdin-filename", "pkg/helpers.py", cwd=root, input=buffer)
    assert r.returncode == 1, r.stderr
    assert finding_lines(r.stdout) == ["pkg/helpers.py:2:5: DYN301 `print()` is a side effect Dynamo cannot "
                                       "trace: it breaks the graph"]
    assert "print(x)" in r.stdout and "reached through: Net.forward -> helper" in r.stdout
    assert cli("check", ".", cwd=root).returncode == 0                 # the disk's file, cached or not
    r = cli("check", "-", "--stdin-filename", "pkg/new.py", "--format", "json", cwd=root,
            input="import torch\n\n@torch.compile\ndef f(x):\n    return x.item()\n")
    assert [f["path"] for f in json.loads(r.stdout)["findings"]] == ["pkg/new.py"]     # not on disk yet


@pytest.mark.parametrize("args", [["-"], ["-", "b.py", "--stdin-filename", "a.py"],
                                  ["-", "--stdin-filename", "a.py", "--fix"]])
def test_stdin_misuse_is_a_usage_error(cli, tmp_path, args):
    root = write_tree(tmp_path, STDIN_PROJECT)
    r = cli("check", *args, cwd=root, input="x = 1\n")
    assert r.returncode == 2 and "dynlint: error:" in r.stderr


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["check", "--help"]])
def test_version_and_help_load_neither_libcst_nor_the_engine(argv):
    # startup (first-week issue, item 7): what answers at once must not pay for the parser and the analysis
    code = ("import sys\nfrom dynlint.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "heavy = sorted(m for m in ('libcst', 'dynlint.api', 'dynlint.linter.engine') if m in sys.modules)\n"
            "print('HEAVY', heavy)\n")
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120).stdout
    assert "HEAVY []" in out, out


def test_a_named_file_is_checked_with_its_whole_project_in_view(cli, tmp_path):
    # first-week issue, item 6: the editor, flake8 and stdin follow callers in other files; a file named on the
    # command line (as pre-commit names the staged ones) must get the same findings, and only its own
    write_tree(tmp_path, {
        "pyproject.toml": "[tool.dynlint]\n",
        "pkg/__init__.py": "",
        "pkg/layers.py": "def helper(x):\n    return x.item()\n",
        "pkg/model.py": "import torch\n\nfrom pkg.layers import helper\n\n\n@torch.compile\n"
                        "def model(x):\n    print(x)\n    return helper(x * 2)\n",
    })
    named = cli("check", "pkg/layers.py", "--format", "json", cwd=tmp_path)
    found = json.loads(named.stdout)
    assert [(f["path"], f["line"], f["code"]) for f in found["findings"]] == [("pkg/layers.py", 2, "DYN201")]
    stdin = cli("check", "-", "--stdin-filename", "pkg/layers.py", "--format", "json", cwd=tmp_path,
                input="def helper(x):\n    return x.item()\n")
    assert json.loads(stdin.stdout)["findings"] == found["findings"]
    assert "1 file checked" in cli("check", "pkg/layers.py", cwd=tmp_path).stdout


# ---- what a ruff user reaches for ----------------------------------------------------------------------
def test_output_format_is_the_name_and_format_an_alias(cli, project):
    one = cli("check", ".", "--output-format", "json", "--no-cache", cwd=project)
    other = cli("check", ".", "--format", "json", "--no-cache", cwd=project)
    assert one.returncode == other.returncode == 1, one.stderr
    assert json.loads(one.stdout)["findings"] == json.loads(other.stdout)["findings"] != []


def test_select_all_selects_every_rule(cli, project):
    every = cli("check", ".", "--select", "ALL", "--output-format", "json", "--no-cache", cwd=project)
    default = cli("check", ".", "--select", "DYN", "--output-format", "json", "--no-cache", cwd=project)
    assert every.returncode == 1, every.stderr
    assert json.loads(every.stdout)["findings"] == json.loads(default.stdout)["findings"]


def test_a_rule_that_works_from_the_breaks_reports_when_selected_alone(cli, tmp_path):
    """DYN510 reads the `.item()` break of its unit: `--select DYN510` still runs the break rules, and reports
    only what was selected."""
    write_tree(tmp_path, {"model.py": (
        "import torch\n\n\n@torch.compile\ndef normalise(x):\n    peak = x.abs().max().item()\n"
        "    return x / (peak + 1e-6)\n")})
    r = cli("check", ".", "--select", "DYN510", "--output-format", "json", "--no-cache", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert [(f["code"], f["line"]) for f in json.loads(r.stdout)["findings"]] == [("DYN510", 7)]


def test_rule_all_explains_every_rule(cli):
    r = cli("rule", "--all")
    assert r.returncode == 0, r.stderr
    assert "# DYN101 " in r.stdout and "# DYN517 " in r.stdout
    assert cli("rule").returncode == 2


def test_clean_removes_the_caches_dynlint_made_and_nothing_else(cli, project, tmp_path):
    assert cli("check", ".", cwd=project).returncode == 1
    assert (project / ".dynlint_cache").is_dir()
    other = write_tree(tmp_path, {"elsewhere/.dynlint_cache/data.txt": "not ours"}) / "elsewhere"
    r = cli("clean", cwd=project)
    assert r.returncode == 0 and "Removing cache at: .dynlint_cache" in r.stdout, r.stderr
    assert not (project / ".dynlint_cache").exists()
    assert cli("clean", cwd=other.parent).returncode == 0
    assert (other / ".dynlint_cache" / "data.txt").read_text() == "not ours"


def test_stdin_filename_alone_reads_stdin_as_ruff_does(cli, tmp_path):
    root = write_tree(tmp_path, STDIN_PROJECT)
    buffer = "import torch\n\n@torch.compile\ndef f(x):\n    return x.item()\n"
    alone = cli("check", "--stdin-filename", "pkg/new.py", "--output-format", "json", cwd=root, input=buffer)
    dashed = cli("check", "-", "--stdin-filename", "pkg/new.py", "--output-format", "json", cwd=root, input=buffer)
    assert alone.returncode == dashed.returncode == 1, alone.stderr
    assert json.loads(alone.stdout)["findings"] == json.loads(dashed.stdout)["findings"] != []


def test_the_summary_never_says_zero_fixable(cli, tmp_path):
    """Only an unsafe fix on offer: no "[*] 0 fixable with --fix" line."""
    write_tree(tmp_path, {"m.py": "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n"
                                  "    def __init__(self):\n        super().__init__()\n        self.calls = 0\n\n"
                                  "    def forward(self, x):\n        self.calls += 1\n        return x * 2\n"})
    r = cli("check", ".", "--no-cache", cwd=tmp_path)
    assert "DYN306" in r.stdout and "0 fixable" not in r.stdout, r.stdout
    assert r.stdout.rstrip().endswith("No fixes with --fix (1 with --unsafe-fixes).")


@pytest.mark.parametrize("comment,left", [
    ("# dynlint: noqa: DYN201", ["DYN101", "DYN301"]),        # those codes, in the whole file
    ("# ruff: noqa: DYN1, DYN301", ["DYN201"]),               # ruff's spelling, prefixes too
    ("# dynlint: noqa", []),                                   # the whole file
    ("# ruff: noqa", ["DYN101", "DYN201", "DYN301"]),         # a bare one is ruff's alone
])
def test_file_level_exemptions_as_ruff_writes_them(cli, tmp_path, comment, left):
    write_tree(tmp_path, {"m.py": comment + "\n" + BAD})
    r = cli("check", ".", "--no-cache", "--output-format", "json", cwd=tmp_path)
    assert sorted({f["code"] for f in json.loads(r.stdout)["findings"]}) == left, r.stderr


def test_exit_non_zero_on_fix(cli, tmp_path):
    """ruff's flag: --fix that fixed everything exits 0, unless --exit-non-zero-on-fix, then 1."""
    fixable = "import torch\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x * 2\n"
    write_tree(tmp_path, {"a/m.py": fixable, "b/m.py": fixable})
    assert cli("check", "a", "--fix", "--no-cache", cwd=tmp_path).returncode == 0
    r = cli("check", "b", "--fix", "--exit-non-zero-on-fix", "--no-cache", cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "is_compiling()" in (tmp_path / "b" / "m.py").read_text()
    assert cli("check", "b", "--fix", "--exit-non-zero-on-fix", "--no-cache", cwd=tmp_path).returncode == 0


def test_isolated_reads_no_configuration_file(cli, tmp_path):
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\nignore = ['DYN301']\n", "pkg/model.py": BAD})
    configured = json.loads(cli("check", ".", "--no-cache", "--output-format", "json", cwd=tmp_path).stdout)
    isolated = json.loads(cli("check", ".", "--isolated", "--no-cache", "--output-format", "json",
                              cwd=tmp_path).stdout)
    assert "DYN301" not in {f["code"] for f in configured["findings"]}
    assert "DYN301" in {f["code"] for f in isolated["findings"]}
    assert {f["path"] for f in isolated["findings"]} == {"pkg/model.py"}       # the same project root
    assert cli("check", ".", "--isolated", "--config", "pyproject.toml", cwd=tmp_path).returncode == 2


def test_ignore_noqa_reports_what_the_comments_silence(cli, tmp_path):
    write_tree(tmp_path, {"m.py": "import torch\n\n@torch.compile\ndef f(x):\n    return x.item()  # noqa: DYN201\n"})
    assert cli("check", ".", cwd=tmp_path).returncode == 0          # cached without the flag first
    r = cli("check", ".", "--ignore-noqa", "--output-format", "json", cwd=tmp_path)
    assert r.returncode == 1 and [f["code"] for f in json.loads(r.stdout)["findings"]] == ["DYN201"], r.stderr


def test_config_takes_a_setting_as_ruff_does(cli, tmp_path):
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\nignore = ['DYN301']\n", "pkg/model.py": BAD})
    r = cli("check", ".", "--no-cache", "--output-format", "json", "--config", "ignore = ['DYN2']",
            "--config", "extend-ignore = ['DYN101']", cwd=tmp_path)
    assert {f["code"] for f in json.loads(r.stdout)["findings"]} == {"DYN301"}, r.stderr   # replaces the file's
    shown = cli("check", ".", "--config", "verify.device = 'cpu'", "--show-settings", cwd=tmp_path).stdout
    assert "verify.device = 'cpu'  # command line" in shown
    bad = cli("check", ".", "--config", "nonsense = 1", cwd=tmp_path)
    assert bad.returncode == 2 and "--config: unknown key 'nonsense'" in bad.stderr
    assert cli("check", ".", "--config", "a.toml", "--config", "b.toml", cwd=tmp_path).returncode == 2


def test_fix_only_applies_the_fixes_and_reports_nothing_else(cli, tmp_path):
    """ruff's --fix-only: the fixes are applied, the finding left (an `.item()`, no safe fix) is not reported,
    exit 0."""
    write_tree(tmp_path, {"m.py": BAD})
    r = cli("check", ".", "--fix-only", "--no-cache", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "DYN201" not in r.stdout and r.stdout.startswith("Applied "), r.stdout
    assert "is_compiling()" in (tmp_path / "m.py").read_text()
    assert "DYN201" in cli("check", ".", "--no-cache", cwd=tmp_path).stdout     # still there, only not reported
    assert cli("check", ".", "--fix-only", "--verify", cwd=tmp_path).returncode == 2


def test_add_noqa_silences_every_finding_and_keeps_the_rest(tmp_path):
    """`--add-noqa` (ruff's): each line with findings gets `# noqa: CODES`, merged into a `# noqa: ...` it has;
    a line inside a string takes none and is named; the next check is clean of the silenced findings."""
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "m.py": (
        "import torch\n\n\n@torch.compile\ndef f(x):\n    print(x)  # noqa: DYN999\n"
        "    s = x.sum().item()\n    return x * s, x.tolist()\n")})
    before = subprocess.run([sys.executable, "-m", "dynlint", "check", ".", "--output-format", "json"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    codes = {(f["line"], f["code"]) for f in json.loads(before.stdout)["findings"]}
    assert {6, 7, 8} <= {line for line, _ in codes}
    done = subprocess.run([sys.executable, "-m", "dynlint", "check", ".", "--add-noqa"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout == f"Added {len({line for line, _ in codes})} noqa directives.\n"
    text = (tmp_path / "m.py").read_text()
    assert "print(x)  # noqa: DYN301, DYN999\n" in text
    assert all(f"noqa: {code}" in text.splitlines()[line - 1] or code in text.splitlines()[line - 1]
               for line, code in codes)
    after = subprocess.run([sys.executable, "-m", "dynlint", "check", "."], cwd=tmp_path, capture_output=True,
                           text=True, timeout=120)
    assert after.returncode == 0, after.stdout
    again = subprocess.run([sys.executable, "-m", "dynlint", "check", ".", "--add-noqa"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
    assert again.stdout == "Added 0 noqa directives.\n" and (tmp_path / "m.py").read_text() == text


def test_add_noqa_leaves_a_line_inside_a_string_and_says_so():
    from dynlint.linter.suppressions import add_noqa
    src = 'a = f(x)\ny = g("""\nz\n""")\nd = e + \\\n    1\n'
    text, added, left = add_noqa(src, {1: {"DYN201"}, 2: {"DYN301"}, 5: {"DYN1"}})
    assert added == 1 and left == [2, 5]
    assert text.splitlines()[0] == "a = f(x)  # noqa: DYN201" and text.splitlines()[1:] == src.splitlines()[1:]


def test_watch_checks_again_when_a_file_changes_until_ctrl_c(tmp_path):
    """`--watch` (ruff's): the report, then a new one after an edit; Ctrl-C ends it (exit 130)."""
    import signal
    import time

    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n",
                          "m.py": "import torch\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x\n"})
    import queue
    import threading

    # (SIGINT at its default in the child: a test run started as a background job inherits it ignored, and a
    # Python started so never turns Ctrl-C into KeyboardInterrupt)
    proc = subprocess.Popen([sys.executable, "-m", "dynlint", "check", ".", "--watch", "-q"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines: "queue.Queue[str]" = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
    seen = []
    try:
        def read_until(text):
            deadline = time.time() + 60
            while time.time() < deadline:
                try:
                    line = lines.get(timeout=max(0.1, deadline - time.time()))
                except queue.Empty:
                    break
                seen.append(line)
                if text in line:
                    return
            raise AssertionError("no " + repr(text) + " in:\n" + "".join(seen))
        read_until("Watching for file changes.")
        assert any("Found 1 problem" in line for line in seen)
        with open(tmp_path / "m.py", "a") as f:
            f.write("\n@torch.compile\ndef g(x):\n    return x.item()\n")
        read_until("File change detected")
        read_until("Watching for file changes.")
        assert any("Found 2 problems" in line for line in seen), "".join(seen)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert subprocess.run([sys.executable, "-m", "dynlint", "check", ".", "--watch", "--fix"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60).returncode == 2
