"""A notebook whose cell text forges the view's cell markers (`# %% dynlint cell N`): cell boundaries come from
the notebook's structure, never from text inside a cell, so `--fix` rewrites only the cell that holds the
finding, keeps the forged line where it was, and a marker naming a cell that does not exist is just a comment."""
import pytest

from conftest import write_tree

nbformat = pytest.importorskip("nbformat")

SCALE = "@torch.compile\ndef scale(x):\n    top = x.abs().max().item()\n    return x / top"


def _notebook(forged: str) -> str:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Results\nkept as written"),
                nbformat.v4.new_code_cell("import torch"),
                nbformat.v4.new_code_cell(f"{SCALE}\n{forged}\nrest = 1\n# %% dynlint cell not-a-number\nmore = 2")]
    return nbformat.writes(nb) + "\n"


@pytest.mark.parametrize("forged", ["# %% dynlint cell 1", "# %% dynlint cell 99"], ids=["markdown cell", "no cell"])
@pytest.mark.parametrize("mode", ["--fix", "--diff"])
def test_a_forged_cell_marker_neither_moves_a_fix_nor_crashes(cli, tmp_path, forged, mode):
    project = write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "nb.ipynb": _notebook(forged)})
    before, text = nbformat.read(project / "nb.ipynb", as_version=4), (project / "nb.ipynb").read_text()
    r = cli("check", ".", mode, cwd=project)
    assert "Traceback" not in r.stderr, r.stderr
    if mode == "--diff":
        assert r.returncode == 1 and '-    "    top = x.abs().max().item()\\n",' in r.stdout, r.stdout + r.stderr
        changed = [ln for ln in r.stdout.splitlines()[2:] if ln[:1] in "+-"]
        assert len(changed) == 2                                              # that one line, nothing else
        assert (project / "nb.ipynb").read_text() == text
        return
    after = nbformat.read(project / "nb.ipynb", as_version=4)
    assert after.cells[0] == before.cells[0] and after.cells[1] == before.cells[1]
    assert after.cells[2].source == before.cells[2].source.replace(".max().item()", ".max()")


def test_findings_after_a_forged_marker_stay_in_their_cell(cli, tmp_path):
    text = _notebook("# %% dynlint cell 1").replace("rest = 1", "@torch.compile\\ndef g(x):\\n    return x.item()")
    project = write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "nb.ipynb": text})
    r = cli("check", ".", cwd=project)
    assert "nb.ipynb:cell 3:3:11: DYN201" in r.stdout and "nb.ipynb:cell 3:8:12: DYN201" in r.stdout, r.stdout
