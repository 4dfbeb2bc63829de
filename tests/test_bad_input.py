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
