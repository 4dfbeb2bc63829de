"""`--format github`: one GitHub Actions workflow command per finding, escaped as @actions/core escapes."""
import json
import re
import shutil
from pathlib import Path

from dynlint.linter.finding import Finding, parse_error_finding
from dynlint.report import github

PROJECT = Path(__file__).resolve().parent / "fixtures" / "integrations" / "project"
COMMAND = re.compile(r"::(?P<level>error|warning|notice) (?P<props>[^:]*)::(?P<message>.*)")


def unescape(s: str) -> str:
    for code, char in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        s = s.replace(code, char)
    return s


def parse(line: str) -> dict:
    m = COMMAND.fullmatch(line)
    assert m, line
    props = dict(p.split("=", 1) for p in m["props"].split(","))
    return {"level": m["level"], **{k: unescape(v) for k, v in props.items()}, "message": unescape(m["message"])}


def test_annotations_match_the_cli_findings(cli, tmp_path):
    project = shutil.copytree(PROJECT, tmp_path / "project")
    r = cli("check", "--format", "github", cwd=project)
    assert r.returncode == 1, r.stderr
    findings = json.loads(cli("check", "--format", "json", cwd=project).stdout)["findings"]
    commands = [parse(line) for line in r.stdout.splitlines()]
    assert len(commands) == len(findings) >= 5
    for c, f in zip(commands, findings):
        assert c == {
            "level": {"error": "error", "note": "notice"}.get(f["severity"], "warning"),
            "file": f["path"], "line": str(f["line"]), "col": str(f["column"] + 1),
            "endLine": str(f["end_line"]), "endColumn": str(f["end_column"] + 1), "title": f"{f['code']} {f['name']}",
            "message": f["message"] + (f"\nreached through: {' -> '.join(f['chain'])}" if f["chain"] else "")
            + f"\nhelp: {f['fix']}",
        }


def test_escaping_follows_actions_core():
    f = Finding(path="dir,1/a:b%.py", line=3, column=4, end_line=3, end_column=9, code="DYN301",
                name="print-in-compiled-code", message="100% sure\r\nsecond: line, with comma", fix="")
    assert github.command(f) == (
        "::warning file=dir%2C1/a%3Ab%25.py,line=3,col=5,endLine=3,endColumn=10,title=DYN301 print-in-compiled-code"
        "::100%25 sure%0D%0Asecond: line, with comma")
    assert github.escape_property("a:b,c%d\ne\rf") == "a%3Ab%2Cc%25d%0Ae%0Df"
    assert github.escape_data("a:b,c%d\ne\rf") == "a:b,c%25d%0Ae%0Df"


def test_levels_and_spans():
    base = Finding(path="m.py", line=2, column=0, code="DYN101", message="m", name="n")
    assert github.command(base).startswith("::warning file=m.py,line=2,col=1,title=DYN101 n::")  # no span known
    assert github.command(base.with_(severity="error")).startswith("::error ")
    assert github.command(base.with_(severity="note")).startswith("::notice ")
    assert github.command(parse_error_finding("bad.py", "invalid syntax", 4, 7)) == (
        "::error file=bad.py,line=4,col=8,title=DYN000 unparsable-file::cannot parse file: invalid syntax")
    multi = base.with_(end_line=4, end_column=3, status="confirmed")
    assert parse(github.command(multi))["endLine"] == "4" and parse(github.command(multi))["endColumn"] == "4"
    assert parse(github.command(multi))["message"] == "m [confirmed]"


def test_parse_errors_are_errors(cli, tmp_path):
    project = shutil.copytree(PROJECT, tmp_path / "project")
    (project / "broken.py").write_text("x = 1\ndef f(:\n    pass\n")
    r = cli("check", "--format", "github", cwd=project)
    [error] = [parse(line) for line in r.stdout.splitlines() if line.startswith("::error")]
    assert error["file"] == "broken.py" and error["line"] == "2" and error["title"] == "DYN000 unparsable-file"
    assert error["message"].startswith("cannot parse file")


def test_paths_are_relative_to_the_repository_for_a_project_in_a_subfolder(tmp_path):
    """Actions resolves annotation paths against the repository root, not the project's folder."""
    import subprocess
    import sys

    (tmp_path / ".git").mkdir()
    project = tmp_path / "services" / "model"
    project.mkdir(parents=True)
    (project / "pyproject.toml").write_text("[tool.dynlint]\n")
    (project / "m.py").write_text("import torch\n\n@torch.compile\ndef f(x):\n    return x.item()\n")
    r = subprocess.run([sys.executable, "-m", "dynlint", "check", ".", "--format", "github"], cwd=project,
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stdout.startswith("::warning file=services/model/m.py,line=5,col=12,")
