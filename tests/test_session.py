"""`api.Session`, the editor's repeated checks of one project (the language server's engine): every check sees the
whole project, so a helper in another file that a compiled function calls keeps its findings after any number of
edits, and an undo brings back exactly what was there."""
from dynlint import api

from conftest import write_tree

MODEL = "import torch\nfrom utils import helper\n\n\n@torch.compile\ndef f(x):\n    return helper(x)\n"
UTILS = "def helper(x):\n    return x.item()\n"
EDITED = "def helper(x):\n    y = x + 1\n    return y.item()\n"


def _lines(result, path):
    return sorted((f.line, f.code) for f in result.findings if f.path == path)


def test_cross_file_findings_survive_edits_and_undo(tmp_path):
    project = write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "model.py": MODEL, "utils.py": UTILS})
    session = api.Session(str(project / "model.py"))
    first = session.check()
    assert _lines(first, "utils.py") == [(2, "DYN201")]
    edited = session.check({"utils.py": EDITED.encode()})
    assert _lines(edited, "utils.py") == [(3, "DYN201")]
    again = session.check({"utils.py": EDITED.encode()})
    assert _lines(again, "utils.py") == [(3, "DYN201")]
    undone = session.check({"utils.py": UTILS.encode()})
    assert _lines(undone, "utils.py") == [(2, "DYN201")] and set(undone.files) == set(first.files)
    assert _lines(session.check(), "utils.py") == [(2, "DYN201")]
