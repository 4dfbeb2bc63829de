"""Files that cannot be parsed: exactly one DYN000 each, and the good files are still checked."""
import os
import sys

import pytest

from conftest import write_tree

GOOD = "import torch\n\n@torch.compile\ndef f(x):\n    return x.item()\n"
BAD_FILES = {
    "syntax.py": "def f(:\n    pass\n",
    "py2.py": "print 'hello'\n",
    "nul.py": b"x = 1\x00\n",
    "undecodable.py": b"x = '\xff\xfe\xfa'\n",
    "badcookie.py": b"# -*- coding: no-such-codec -*-\nx = 1\n",
    "indent.py": "def f():\nreturn 1\n",
}


@pytest.fixture
def bad_project(tmp_path):
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "good.py": GOOD, **BAD_FILES})
    unreadable = tmp_path / "unreadable.py"
    unreadable.write_text("x = 1\n")
    unreadable.chmod(0)
    return tmp_path


def test_each_bad_file_gives_one_dyn000_and_good_files_are_checked(cli, bad_project):
    r = cli("check", ".", "--format", "json", cwd=bad_project)
    import json
    doc = json.loads(r.stdout)
    by_file = {}
    for f in doc["findings"]:
        by_file.setdefault(f["path"], []).append(f["code"])
    expected_bad = set(BAD_FILES)
    if os.geteuid() != 0 or sys.platform == "win32":   # root can read a chmod 0 file
        expected_bad.add("unreadable.py")
    assert by_file.pop("good.py") == ["DYN201"]
    assert {p for p, codes in by_file.items() if codes == ["DYN000"]} == expected_bad
    assert set(by_file) == expected_bad
    assert {e["path"] for e in doc["errors"]} == expected_bad
    assert r.returncode == 1


def test_parse_error_message_and_position(cli, bad_project):
    r = cli("check", "syntax.py", "-q", cwd=bad_project)
    assert r.returncode == 1
    assert r.stdout.startswith("syntax.py:1:7: DYN000 cannot parse file: ")


def test_bom_crlf_and_tabs_are_fine(cli, tmp_path):
    src = "\ufeffimport torch\r\n\r\n@torch.compile\r\ndef f(x):\r\n\tif x.sum() > 0:\r\n\t\treturn x\r\n\treturn -x\r\n"
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "w.py": src.encode("utf-8")})
    r = cli("check", ".", "-q", cwd=tmp_path)
    assert r.stdout.splitlines()[0].startswith("w.py:5:5: DYN101")


def test_static_check_never_imports_the_checked_code(cli, tmp_path):
    marker = tmp_path / "imported.marker"
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n",
                          "evil.py": f"open({str(marker)!r}, 'w').write('ran')\nimport torch\n"
                                     "@torch.compile\ndef f(x):\n    return x.item()\n"})
    r = cli("check", ".", cwd=tmp_path)
    assert r.returncode == 1 and "DYN201" in r.stdout
    assert not marker.exists()


def test_static_check_never_imports_a_package_its_conftest_setup_or_examples(cli, tmp_path):
    """Every file here would leave a marker if Python imported or ran it; dynlint only reads them."""
    markers = tmp_path / "markers"
    markers.mkdir()

    def evil(name: str) -> str:
        return f"open({str(markers / name)!r}, 'w').write('ran')\n"

    compiled = "import torch\n\n@torch.compile\ndef f(x):\n    return x.item()\n"
    write_tree(tmp_path, {
        "pyproject.toml": "[tool.dynlint]\n[tool.dynlint.verify]\nexamples = ['**/dynlint_examples.py']\n",
        "pkg/__init__.py": evil("pkg_init") + "from .model import f\n",
        "pkg/model.py": evil("model") + "from pkg import helpers\n" + compiled,
        "pkg/helpers.py": evil("helpers"),
        "pkg/__main__.py": evil("main"),
        "pkg/dynlint_examples.py": evil("examples") + "import dynlint\n\n@dynlint.example\ndef ex():\n"
                                   "    import torch\n    return torch.randn(2)\n",
        "conftest.py": evil("conftest"),
        "setup.py": evil("setup") + "from setuptools import setup\nsetup()\n",
        "sitecustomize.py": evil("sitecustomize"),
        "usercustomize.py": evil("usercustomize"),
        "evil.pth": f"import os; {evil('pth').strip()}\n",
        ".gitignore": "# not code either\n",
    })
    for args in (["."], ["pkg/model.py", "--regions", "all"], [str(tmp_path / "pkg"), "--format", "sarif"]):
        r = cli("check", *args, cwd=tmp_path)
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert sorted(os.listdir(markers)) == []


def test_configuration_is_data_and_cannot_run_code(cli, tmp_path):
    marker = tmp_path / "ran.marker"
    payload = f"__import__('os').system('touch {marker}')"
    write_tree(tmp_path, {"good.py": GOOD})
    for table in (f'select = ["{payload}"]', f'regions = "{payload}"', f'exclude = "{payload}"',
                  f'cache-dir = 1\nper-file-ignores = {{ "x" = "{payload}" }}', f'"{payload}" = 1',
                  f'[tool.dynlint.verify]\nexamples = ["x"]\ntimeout = "{payload}"'):
        (tmp_path / "pyproject.toml").write_text(f"[tool.dynlint]\n{table}\n")
        r = cli("check", ".", cwd=tmp_path)
        assert r.returncode == 2 and r.stderr.startswith("dynlint: error: ") and "Traceback" not in r.stderr
    assert not marker.exists()


def test_report_paths_are_relative_to_the_project_root(cli, tmp_path):
    """Given by absolute path, from another folder, or outside the root (then with ../): never absolute."""
    import json
    write_tree(tmp_path, {"proj/pyproject.toml": "[tool.dynlint]\n", "proj/sub/m.py": GOOD, "other/o.py": GOOD})
    proj = tmp_path / "proj"
    for cwd, args in ((tmp_path / "other", [proj / "sub" / "m.py", tmp_path / "other" / "o.py"]),
                      (proj / "sub", ["m.py", "../../other/o.py"]),
                      (tmp_path, ["proj", "other/o.py"])):
        r = cli("check", *args, "--format", "json", "--no-cache", cwd=cwd)
        doc = json.loads(r.stdout)
        assert doc["files"] == ["../other/o.py", "sub/m.py"], (cwd, args)
        assert [f["path"] for f in doc["findings"]] == ["../other/o.py", "sub/m.py"]
