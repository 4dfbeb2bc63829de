"""The fast paths never change the answer: cache invalidation and -j1/-jN equivalence."""
import json
import textwrap

import pytest

from conftest import write_tree

PROJECT = {
    "pyproject.toml": "[tool.dynlint]\n",
    "pkg/__init__.py": "",
    "pkg/helpers.py": "def rotate(x):\n    return x.flip(0)\n",
    "pkg/model.py": textwrap.dedent("""
        import torch.nn as nn
        from pkg.helpers import rotate

        class Net(nn.Module):
            def forward(self, x):
                return rotate(x)
    """),
}


def findings(cli, root, *extra):
    r = cli("check", ".", "--format", "json", *extra, cwd=root)
    assert r.returncode in (0, 1), r.stderr
    return sorted((f["path"], f["line"], f["code"]) for f in json.loads(r.stdout)["findings"])


@pytest.fixture
def project(tmp_path):
    return write_tree(tmp_path, PROJECT)


def test_cache_folder_is_created_and_git_ignored(cli, project):
    findings(cli, project)
    assert (project / ".dynlint_cache" / ".gitignore").read_text().strip().endswith("*")


def test_callee_change_in_another_file_is_seen(cli, project):
    assert findings(cli, project) == []
    (project / "pkg/helpers.py").write_text("def rotate(x):\n    print(x)\n    return x.flip(0)\n")
    assert findings(cli, project) == [("pkg/helpers.py", 2, "DYN301")]
    # and the region can disappear: the caller stops calling the helper
    (project / "pkg/model.py").write_text(PROJECT["pkg/model.py"].replace("return rotate(x)", "return x"))
    assert findings(cli, project) == []


BLOCK = textwrap.dedent("""
    import torch
    from torch import nn

    class Block(nn.Module):
        def forward(self, hidden_states, height, width):
            return hidden_states.view(-1, height, width) + torch.zeros(height, width)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()

        def forward(self, x):
            b, h, w = x.shape
            return self.block(x, h, w)
""")


@pytest.mark.parametrize("other", [
    "import pkg.net as net\n\nclass Wide(net.Block):\n    pass\n",     # a subclass, by a dotted base
    "from pkg.net import Block\n\nREGISTRY = [Block]\n",              # imported: its callers are not all in view
])
def test_what_another_file_does_with_a_class_reaches_the_cached_findings_of_its_file(cli, tmp_path, other):
    """`height` is an int at the one call in view; a file that does not import net.py can still make that
    call not the only one (subclass it, import it): net.py's cached findings must not outlive it."""
    root = write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "pkg/__init__.py": "", "pkg/net.py": BLOCK})
    assert findings(cli, root) == []
    (root / "pkg/other.py").write_text(other)
    assert {c for _, _, c in findings(cli, root)} == {"DYN403"}
    assert findings(cli, root) == findings(cli, root, "--no-cache")


def test_edit_of_a_checked_file_is_seen(cli, project):
    findings(cli, project)
    (project / "pkg/model.py").write_text(PROJECT["pkg/model.py"].replace("return rotate(x)", "return x.item()"))
    assert findings(cli, project) == [("pkg/model.py", 7, "DYN201")]


def test_lines_that_move_are_seen_in_every_file(cli, project):
    """An edit that moves code keeps the index's shape (the whole-project pass is reused) but not its lines:
    region findings and site findings (a discarded torch.compile result) must follow, in the edited file and in the
    file that imports it."""
    (project / "pkg/helpers.py").write_text("def rotate(x):\n    print(x)\n    return x.flip(0)\n")
    (project / "pkg/train.py").write_text(textwrap.dedent("""
        import torch
        from pkg.model import Net

        def build():
            model = Net()
            torch.compile(model)
            return model
    """))
    before = findings(cli, project)
    assert ("pkg/helpers.py", 2, "DYN301") in before and any(p == "pkg/train.py" for p, _, _ in before)
    for rel in ("pkg/helpers.py", "pkg/train.py"):
        path = project / rel
        path.write_text("# a comment\n" * 10 + path.read_text())
    after = findings(cli, project)
    assert after == sorted((p, line + 10, code) for p, line, code in before)
    assert after == findings(cli, project, "--no-cache")


def test_config_change_is_seen(cli, project):
    (project / "pkg/helpers.py").write_text("def rotate(x):\n    print(x)\n    return x.flip(0)\n")
    assert findings(cli, project) == [("pkg/helpers.py", 2, "DYN301")]
    (project / "pyproject.toml").write_text('[tool.dynlint]\nregions = "explicit"\n')
    assert findings(cli, project) == []


def test_version_change_is_seen(cli, project, monkeypatch):
    """A cache written by another dynlint version is never read."""
    from pathlib import Path

    from dynlint.linter import cache as cache_mod
    from dynlint.linter.finding import Finding

    findings(cli, project)
    store = cache_mod.open_cache(Path(project).resolve(), "x", ["DYN101"])
    store.checks["pkg/model.py"] = ("k", [Finding("pkg/model.py", 1, 0, "DYN101", "stale")])
    store.dirty = True
    store.save()
    monkeypatch.setattr(cache_mod, "code_version", lambda: "999.0+other")
    assert cache_mod.open_cache(Path(project).resolve(), "x", ["DYN101"]).checks == {}


def test_cache_is_keyed_on_dynlint_code_not_only_its_version(tmp_path):
    """An install from a branch, or an edited rule, has the same version string but other code: the key differs."""
    import shutil
    from pathlib import Path

    import dynlint
    from dynlint.linter import cache as cache_mod

    package = tmp_path / "dynlint"
    shutil.copytree(Path(dynlint.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__"))
    assert cache_mod.code_version() == f"{dynlint.__version__}+{cache_mod.source_digest(package)}"
    before = cache_mod.source_digest(package)
    rule = package / "rules" / "host_sync.py"
    rule.write_text(rule.read_text() + "\n# a local edit\n")
    assert cache_mod.source_digest(package) != before


def test_damaged_cache_is_ignored(cli, project):
    (project / "pkg/helpers.py").write_text("def rotate(x):\n    print(x)\n    return x\n")
    want = findings(cli, project)
    for f in (project / ".dynlint_cache").glob("*.pickle"):
        f.write_bytes(b"garbage")
    assert findings(cli, project) == want


def test_jobs_and_cache_give_identical_output(cli, tmp_path):
    files = {"pyproject.toml": "[tool.dynlint]\n"}
    for i in range(40):      # enough files for the worker pool to start
        files[f"m{i:02}.py"] = textwrap.dedent(f"""
            import torch

            @torch.compile
            def f{i}(x):
                if x.sum() > {i}:
                    print(x)
                return x.nonzero()
        """)
    write_tree(tmp_path, files)
    runs = [cli("check", ".", *flags, cwd=tmp_path).stdout for flags in
            (["-j1", "--no-cache"], ["-j2", "--no-cache"], ["-j2"], ["-j2"], ["-j1"])]
    assert all(r == runs[0] for r in runs), "outputs differ"
    assert runs[0].count("DYN101") == 40
