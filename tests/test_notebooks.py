"""Jupyter notebooks (linter/notebooks.py): code cells checked as one module in cell order, findings reported at
their cell and line in every format, `--fix` writing the cells back into a notebook nbformat accepts. Run
through the CLI as a user runs it; the cells' code also runs under real Dynamo, which must break where the
finding says."""
import json
import shutil
import subprocess

import pytest

from conftest import write_tree

nbformat = pytest.importorskip("nbformat")

HELPER = "def peak(x):\n    return x.abs().max().item()\n"
CELLS = [
    ("markdown", "# A model\nSome text."),
    ("code", "%matplotlib inline\nimport torch\n!pip list\nfrom helpers import peak"),
    ("code", "@torch.compile\ndef scale(x):\n    top = x.abs().max().item()\n    return x / top"),
    ("code", "%%bash\necho this is not Python ("),
    ("code", "files = !ls\ntorch.ones?\n\n@torch.compile\ndef norm(x):\n    return x / peak(x)"),
    ("code", "out = scale(torch.ones(3)), norm(torch.ones(3))"),
]


def notebook(cells=CELLS):
    nb = nbformat.v4.new_notebook()
    for kind, src in cells:
        nb.cells.append(nbformat.v4.new_markdown_cell(src) if kind == "markdown" else nbformat.v4.new_code_cell(src))
    nb.cells[2].outputs = [nbformat.v4.new_output("stream", text="an output\n")]
    nb.cells[2].execution_count = 3
    return nbformat.writes(nb) + "\n"


@pytest.fixture
def project(tmp_path):
    return write_tree(tmp_path / "proj", {"pyproject.toml": "[tool.dynlint]\n", "helpers.py": HELPER,
                                          "nb.ipynb": notebook()})


def test_findings_are_reported_at_their_cell_and_line(cli, project):
    r = cli("check", ".", cwd=project)
    assert r.returncode == 1, r.stderr
    lines = [line for line in r.stdout.splitlines() if ": DYN" in line]
    assert lines[0].startswith("helpers.py:2:12: DYN201")         # a helper of the notebook's compiled code
    assert lines[1].startswith("nb.ipynb:cell 3:3:11: DYN201")
    assert lines[2].startswith("nb.ipynb:cell 3:4:16: DYN510")    # `x / top`: the resumed code's guard
    assert len(lines) == 3                                         # IPython lines and the %%bash cell: nothing
    assert "     3 |     top = x.abs().max().item()" in r.stdout    # the cell's own line under it
    doc = json.loads(cli("check", ".", "--format", "json", cwd=project).stdout)
    [f] = [f for f in doc["findings"] if f["path"] == "nb.ipynb" and f["code"] == "DYN201"]
    assert (f["cell"], f["line"], f["column"], f["end_line"], f["code"]) == (3, 3, 10, 3, "DYN201")
    assert doc["errors"] == []


def test_dynamo_breaks_where_the_finding_says(cli, project, monkeypatch, tmp_path):
    """The notebook's code, run as one module the way its cells run in a kernel, under real Dynamo."""
    pytest.importorskip("torch")
    from dynlint.compiler import harness
    from dynlint.linter import notebooks

    view = notebooks.view((project / "nb.ipynb").read_bytes()).text
    module = tmp_path / "nb_as_module.py"
    module.write_text(view)
    monkeypatch.syspath_prepend(str(project))                    # `from helpers import peak`, as in a kernel
    obs = harness.observe(str(module))          # importing it runs the last cell: both compiled functions
    at = notebooks.where(view)
    broke = {("helpers.py", 0, b.reported_line) if b.reported_path.endswith("helpers.py") else
             ("nb.ipynb", *at[b.line - 1]) for b in obs.breaks}
    doc = json.loads(cli("check", ".", "--format", "json", cwd=project).stdout)
    # (the breaks: DYN510's recompile needs a second call with other data, which the module does not make)
    assert broke and broke == {(f["path"], f.get("cell", 0), f["line"]) for f in doc["findings"]
                               if f["code"] != "DYN510"}


def test_fix_writes_the_cells_back_into_a_valid_notebook(cli, project):
    before = nbformat.reads((project / "nb.ipynb").read_text(), as_version=4)
    r = cli("check", ".", "--fix", cwd=project)
    assert "Applied" in r.stdout, r.stdout + r.stderr
    after = nbformat.read(project / "nb.ipynb", as_version=4)
    nbformat.validate(after)
    assert after.cells[2].source == "@torch.compile\ndef scale(x):\n    top = x.abs().max()\n    return x / top"
    assert after.cells[2].outputs == before.cells[2].outputs and after.cells[2].execution_count == 3
    for i in (0, 1, 3, 4, 5):                                     # IPython lines, other cells: as they were
        assert after.cells[i] == before.cells[i]
    again = cli("check", "nb.ipynb", cwd=project)
    assert again.returncode == 0, again.stdout


def test_diff_applies_to_the_notebook_with_git(cli, project):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    diff = cli("check", "nb.ipynb", "--diff", cwd=project).stdout
    assert diff.startswith("--- a/nb.ipynb\n+++ b/nb.ipynb\n") and diff.count("\n-    ") == 1, diff
    subprocess.run(["git", "apply"], input=diff, text=True, cwd=project, check=True)
    nbformat.validate(nbformat.read(project / "nb.ipynb", as_version=4))
    assert cli("check", "nb.ipynb", cwd=project).returncode == 0


def test_sarif_and_github_point_at_the_line_of_the_stored_notebook(cli, project):
    from test_sarif import valid

    doc = valid(json.loads(cli("check", "nb.ipynb", "--format", "sarif", cwd=project).stdout))
    [res] = [r for r in doc["runs"][0]["results"] if r["ruleId"] == "DYN201"]
    line = res["locations"][0]["physicalLocation"]["region"]["startLine"]
    stored = (project / "nb.ipynb").read_text().splitlines()
    assert '"    top = x.abs().max().item()\\n",' in stored[line - 1]
    assert (res["properties"]["cell"], res["properties"]["cellLine"]) == (3, 3)
    gh = cli("check", "nb.ipynb", "--format", "github", cwd=project).stdout
    assert gh.startswith(f"::warning file=nb.ipynb,line={line},title=DYN201") and "(cell 3, line 3)" in gh


def test_a_notebook_that_cannot_be_read_is_one_dyn000_and_hides_nothing_else(cli, project):
    (project / "broken.ipynb").write_text('{"cells": [')
    (project / "old.ipynb").write_text(json.dumps({"nbformat": 9, "nbformat_minor": 0, "cells": []}))
    r = cli("check", ".", "--format", "json", cwd=project)
    doc = json.loads(r.stdout)
    errors = {f["path"]: f["message"] for f in doc["findings"] if f["code"] == "DYN000"}
    assert set(errors) == {"broken.ipynb", "old.ipynb"} and all("not a notebook" in m for m in errors.values())
    assert {("nb.ipynb", 3), ("helpers.py", 0)} == {(f["path"], f.get("cell", 0)) for f in doc["findings"]
                                                    if f["code"] == "DYN201"}


def test_a_fix_that_would_remove_an_ipython_line_leaves_the_notebook_alone():
    from dynlint.linter import notebooks

    data = notebook().encode()
    view = notebooks.view(data).text
    assert notebooks.write_back(data, view) == data                  # nothing changed: the same bytes
    with pytest.raises(ValueError, match="removed an IPython line"):
        notebooks.write_back(data, view.replace("pass  # dynlint: IPython syntax\n", "", 1))
    with pytest.raises(ValueError, match="mark the notebook's cells"):
        notebooks.write_back(data, view.replace("# %% dynlint cell 5\n", ""))


def test_stored_lines_follow_the_json_as_any_writer_laid_it_out():
    """Other writers than Jupyter: metadata first (with a "cells" key of its own), a source given as one
    string, compact JSON on one line."""
    from dynlint.linter import notebooks

    doc = {"metadata": {"cells": ["not these"]}, "nbformat": 4, "nbformat_minor": 5, "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# title\n", "text"]},
        {"cell_type": "code", "metadata": {}, "outputs": [{"output_type": "stream", "name": "stdout",
                                                           "text": ["{\"cells\": [\n"]}],
         "execution_count": 1, "source": ["import torch\n", "x = 1\n", "y = 2"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": "a = 1\nb = 2\n"}]}
    pretty = json.dumps(doc, indent=2)
    lines = pretty.splitlines()
    at = notebooks.json_lines(pretty.encode())
    assert '"x = 1\\n"' in lines[at[(2, 2)] - 1] and '"y = 2"' in lines[at[(2, 3)] - 1]
    assert '"# title\\n"' in lines[at[(1, 1)] - 1]
    assert at[(3, 1)] == at[(3, 2)] and '"a = 1\\nb = 2\\n"' in lines[at[(3, 1)] - 1]
    assert set(notebooks.json_lines(json.dumps(doc).encode()).values()) == {1}
    assert notebooks.json_lines(b'{"cells": [') == {}


def test_a_notebook_checked_from_its_buffer_finds_what_it_finds_on_disk(project):
    """An editor's unsaved notebook (`check_buffer`) is read as its code cells by every pass: the frame model
    read the buffer's JSON and found no frames in it (DYN509 lost)."""
    from dynlint import api
    from dynlint.linter.config import Config
    layers = ("import torch\nfrom torch import nn\n\nclass Layer(nn.Module):\n    def __init__(self, index):\n"
              "        super().__init__()\n        self.index = index\n\n    def forward(self, x):\n"
              "        torch._dynamo.graph_break()\n        if self.index > 0:\n            x = x * 2\n"
              "        return x\n\nclass Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.layers = nn.ModuleList([Layer(i) for i in range(4)])\n\n    def forward(self, x):\n"
              "        for layer in self.layers:\n            x = layer(x)\n        return x\n\n"
              "m = torch.compile(Model())\n")
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(layers))
    (project / "layers.ipynb").write_text(nbformat.writes(nb))
    config = Config(root=project.resolve())
    on_disk = api.check([str(project / "layers.ipynb")], config).findings
    buffered = api.check_buffer((project / "layers.ipynb").read_bytes(), "layers.ipynb", config).findings
    assert "DYN509" in {f.code for f in on_disk}
    assert [(f.code, f.line) for f in buffered] == [(f.code, f.line) for f in on_disk]
