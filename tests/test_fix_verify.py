"""`dynlint check --fix --verify`: the examples run on the original and on the fixed code, and the files of fixes
they show to be wrong are restored.

* `judge` on its own (no torch): which file is restored for which reason -- outputs changed, the fixed code
  failing, a break left at a fixed line, a new break -- and which fixed files count as kept or not verified.
* The command line as a user runs it, on a small project with `@dynlint.example` providers, with
  `--unsafe-fixes` (unsafe fixes are the ones --verify is for): one safe fix that is right (a print guard)
  stays, and one unsafe fix that changes outputs (the branch -> `torch.where` fix, unsafe because one arm brings
  in a float: the example's integer input comes back as a float tensor) is rolled back, byte for byte.
"""
from __future__ import annotations

import json
import textwrap

import pytest

from conftest import write_tree
from dynlint.api import fix_source
from dynlint.compiler.records import GraphBreak, GuardFailure, Recompile
from dynlint.runtime_check.fixcheck import hunks, judge
from dynlint.runtime_check.results import Agreement, ExampleResult

ORIGINAL = "import torch\n\n\ndef f(x):\n    print(x)\n    return x + 1\n"
FIXED = "import torch\n\n\ndef f(x):\n    if not torch.compiler.is_compiling():\n        print(x)\n    return x + 1\n"
OTHER = "def g(x):\n    return x\n"
OTHER_FIXED = "def g(x):\n    return x * 1\n"
TEXTS = {"m.py": (ORIGINAL, FIXED), "other.py": (OTHER, OTHER_FIXED)}


def _break(path: str, line: int, gb: str = "Failed to trace builtin operator") -> GraphBreak:
    return GraphBreak(gb_types=(gb,), gb_ids=("",), explanation="", hints=(), path=path, line=line, function="f",
                      reported_path=path, reported_line=line, frame_skipped=False, duplicate=False)


def _run(name: str = "ex", executed=(("m.py", (4, 5, 6)),), breaks=(), outcome: str = "ok",
         outputs: str = "match", message: str = "") -> ExampleResult:
    return ExampleResult(name=name, path="dynlint_examples.py", line=1, factory=name, outcome=outcome, phase="done",
                         message=message, graph_breaks=tuple(breaks), executed=tuple(executed),
                         against_original=Agreement(outputs, where="call 0: out", detail="values differ"))


def test_hunks_give_both_sides_of_each_change():
    (h,) = hunks("m.py", ORIGINAL, FIXED)
    assert (h.before, h.after) == ((5, 5), (5, 6))


def test_a_fix_that_removes_its_break_and_keeps_outputs_is_kept():
    v = judge([_run(breaks=[_break("m.py", 5)])], [_run(executed=(("m.py", (4, 5, 6, 7)),))], TEXTS, {"m.py": 1})
    assert v.rolled_back == () and v.kept == ("m.py",) and v.unverified == ("other.py",)
    assert v.to_dict()["kept"] == [{"path": "m.py", "fixes": 1}]


def test_changed_outputs_restore_every_file_the_example_covers():
    both = (("m.py", (5,)), ("other.py", (2,)))
    v = judge([_run(executed=both, breaks=[_break("m.py", 5)])], [_run(executed=both, outputs="mismatch")], TEXTS)
    assert v.restored == ("m.py", "other.py")
    assert "ex: outputs changed (call 0: out: values differ)" in dict(v.rolled_back)["m.py"]


def test_a_break_left_at_a_fixed_line_restores_that_file_only():
    both = (("m.py", (5,)), ("other.py", (2,)))
    before = _run(executed=both, breaks=[_break("m.py", 5)])
    after = _run(executed=both, breaks=[_break("m.py", 6)])          # the print still breaks, one line down
    v = judge([before], [after], TEXTS)
    assert v.restored == ("m.py",) and v.kept == ("other.py",)
    assert "the graph break at m.py:5 remains (Failed to trace builtin operator)" in v.rolled_back[0][1][0]


def test_a_new_break_at_a_fixed_line_and_a_failing_fix_are_rolled_back():
    v = judge([_run()], [_run(breaks=[_break("m.py", 5, "Data-dependent branching")])], TEXTS)
    assert v.restored == ("m.py",) and "new graph break at m.py:5 (Data-dependent branching)" in v.rolled_back[0][1][0]
    v = judge([_run()], [_run(outcome="error", message="RuntimeError: boom\ntraceback")], TEXTS)
    assert v.rolled_back == (("m.py", ("ex: the fixed code fails (RuntimeError: boom)",)),)


def test_a_break_that_changed_kind_is_progress_not_a_failure():
    """`if c: y = y.item() * x` -> torch.where: the data-dependent branch is gone, the .item() break stays."""
    item = "Unsupported Tensor.item() call with capture_scalar_outputs=False"
    before = _run(breaks=[_break("m.py", 5, "Data-dependent branching"), _break("m.py", 5, item)])
    v = judge([before], [_run(breaks=[_break("m.py", 5, item)])], TEXTS)
    assert v.rolled_back == () and v.kept == ("m.py",)


def test_an_example_failing_on_the_original_verifies_nothing():
    v = judge([_run(outcome="error")], [_run(outputs="mismatch")], TEXTS)
    assert v.rolled_back == () and "failed on the original code" in v.examples[0].note
    assert "ex: failed on the original code" in v.render_text()


def test_text_report_shows_graphs_breaks_speedup_and_what_was_rolled_back():
    before = _run(breaks=[_break("m.py", 5)]).with_(eager_ms=2.0, compiled_ms=4.0)
    after = _run(outputs="mismatch").with_(eager_ms=2.0, compiled_ms=1.0)
    text = judge([before], [after], TEXTS, {"m.py": 2}).render_text()
    assert "Fixes verified (original -> fixed):" in text
    row = next(line for line in text.splitlines() if line.strip().startswith("ex "))
    assert row.split() == ["ex", "0", "->", "0", "1", "->", "0", "0", "->", "0", "0.50x", "->", "2.00x", "CHANGED",
                           "rolled", "back"]
    assert "Rolled back m.py (2 fixes): ex: outputs changed" in text
    assert "Not verified (no example runs their changed lines), kept: other.py" in text


def test_recompiles_the_fixes_expose_are_a_warning_not_a_rollback():
    guard = GuardFailure(entry="0/0", guard="self.calls == 3", source="self.calls += 1", path="m.py", line=5)
    recompile = Recompile(function="f", code_name="f", path="m.py", line=4, failures=(guard,))
    before = _run(breaks=[_break("m.py", 5)]).with_(eager_ms=2.0, compiled_ms=4.0)
    after = _run().with_(eager_ms=2.0, compiled_ms=400.0, recompiles=(recompile,) * 3)
    v = judge([before], [after], TEXTS)
    assert v.rolled_back == () and v.kept == ("m.py",)
    warning = "recompiles 0 -> 3, speedup 0.50x -> 0.01x: with the breaks gone, Dynamo compiles code that " \
              "recompiles: guard `self.calls == 3` (m.py:5)"
    assert v.examples[0].warning == warning and f"Warning: ex: {warning}" in v.render_text()
    assert v.to_dict()["examples"][0]["warning"] == warning
    assert judge([before], [_run()], TEXTS).examples[0].warning == ""       # no more recompiles than before
    hinted = judge([before], [after], TEXTS, unsafe_fixes=[("m.py", 5, "DYN306")]).examples[0].warning
    assert hinted == warning + "; --unsafe-fixes has a fix for it (DYN306 at m.py:5)"


# ---- the command line ---------------------------------------------------------------------------------------
GOOD = textwrap.dedent("""
    import torch


    @torch.compile
    def shout(x):
        y = x * 2
        print("y", y.shape)
        return y + 1
""").lstrip()
BAD = textwrap.dedent("""
    import torch


    @torch.compile
    def halve_big(x):
        if x.sum() > 100:
            x = x * 0.5
        return x
""").lstrip()
EXAMPLES = textwrap.dedent("""
    import torch

    import dynlint
    from bad import halve_big
    from good import shout


    @dynlint.example
    def shouting():
        return shout, [(torch.ones(4),)]


    @dynlint.example
    def halving():
        return halve_big, [(torch.arange(4),)]
""").lstrip()


@pytest.mark.dynamo
def test_fix_verify_rolls_back_a_fix_that_changes_outputs(cli, tmp_path):
    pytest.importorskip("torch")
    assert fix_source(BAD) == BAD and fix_source(BAD, unsafe=True) != BAD, "the planted wrong fix is an unsafe one"
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "good.py": GOOD, "bad.py": BAD,
                          "dynlint_examples.py": EXAMPLES})
    r = cli("check", ".", "--fix", "--unsafe-fixes", "--verify", "--device", "cpu", "--no-cache", "--format", "json",
            "-o", "out.json", cwd=tmp_path, timeout=600)
    assert r.returncode == 1, r.stderr               # the branch in bad.py is left, unfixed
    assert (tmp_path / "bad.py").read_bytes() == BAD.encode("utf-8")         # restored byte for byte
    assert "    if not torch.compiler.is_compiling():\n        print(" in (tmp_path / "good.py").read_text()
    assert not list(tmp_path.glob(".*.dynlint-fix"))
    assert "Applied 1 fix to 1 file: 1 finding fewer, 1 remaining. Rolled back 1 fix in bad.py" in r.stderr
    doc = json.loads((tmp_path / "out.json").read_text())
    assert [(f["code"], f["path"], f["status"]) for f in doc["findings"]] == [("DYN101", "bad.py", "confirmed")]
    fixes = doc["verify"]["fixes"]
    assert fixes["kept"] == [{"path": "good.py", "fixes": 1}]
    (rolled,) = fixes["rolled_back"]
    assert rolled["path"] == "bad.py" and "dtype torch.int64 vs torch.float32" in rolled["reasons"][0]
    examples = {e["name"]: e for e in fixes["examples"]}
    shouting, halving = examples["shouting"], examples["halving"]
    assert shouting["before"]["break_sites"] == 1 and shouting["after"]["break_sites"] == 0
    assert shouting["before"]["graphs"] == 2 and shouting["after"]["graphs"] == 1
    assert shouting["outputs"]["status"] == "match" and shouting["after"]["speedup"] > 0
    assert halving["outputs"]["status"] == "mismatch" and halving["problems"][0]["path"] == "bad.py"
    # the verify report describes the code as left: halve_big (restored) still breaks
    runs = {e["name"]: e for e in doc["verify"]["examples"]}
    assert runs["halving"]["break_sites"] == 1 and runs["shouting"]["break_sites"] == 0


COUNTING = textwrap.dedent("""
    import torch


    class Noisy(torch.nn.Module):
        def forward(self, x):
            print("step")
            return x * 2


    class Counting(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList([Noisy(), Noisy()])
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            for layer in self.layers:
                x = layer(x)
            return x + 1
""").lstrip()

COUNTING_EXAMPLES = textwrap.dedent("""
    import torch
    import dynlint
    from counting import Counting


    @dynlint.example
    def counting():
        return Counting(), [(torch.ones(4),), (torch.ones(4),), (torch.ones(4),), (torch.ones(4),)]
""").lstrip()


@pytest.mark.dynamo
def test_fix_verify_warns_when_a_removed_break_exposes_recompiles(cli, tmp_path):
    """The print in the layers breaks the graph inside a loop, so Dynamo skips `forward` -- and never sees the
    counter: with the print guarded, `forward` compiles, and recompiles on every call. --fix --verify says so;
    with --unsafe-fixes the counter becomes a buffer and they go."""
    pytest.importorskip("torch")
    runs = {}
    for tier in ("safe", "unsafe"):
        project = tmp_path / tier
        write_tree(project, {"pyproject.toml": "[tool.dynlint]\n", "counting.py": COUNTING,
                             "dynlint_examples.py": COUNTING_EXAMPLES})
        args = ["check", ".", "--fix", "--verify", "--device", "cpu", "--no-cache", "--format", "json", "-o", "o.json"]
        r = cli(*args, *(["--unsafe-fixes"] if tier == "unsafe" else []), cwd=project, timeout=600)
        (example,) = json.loads((project / "o.json").read_text())["verify"]["fixes"]["examples"]
        runs[tier] = (r, example, (project / "counting.py").read_text())
    r, safe, text = runs["safe"]
    assert "self.calls = 0" in text and "is_compiling()" in text
    assert safe["before"]["recompiles"] == 0 and safe["after"]["recompiles"] >= 2, safe
    assert safe["before"]["break_sites"] >= 1 and safe["after"]["break_sites"] == 0
    assert "recompiles 0 -> " in safe["warning"] and "self.calls" in safe["warning"], safe["warning"]
    # `self.calls += 1`, line 17 of COUNTING, is line 18 once the print guard above it took a line
    assert safe["warning"].endswith("; --unsafe-fixes has a fix for it (DYN306 at counting.py:18)"), safe["warning"]
    r, unsafe, text = runs["unsafe"]
    assert 'self.register_buffer("calls", torch.tensor(0), persistent=False)' in text
    assert unsafe["after"]["recompiles"] == 0 and unsafe["after"]["break_sites"] == 0, unsafe
    assert unsafe["warning"] == ""
    assert unsafe["outputs"]["status"] == "match" and unsafe["after"]["graphs"] == 1
