"""`run_verify` end to end: real workers, real Dynamo and Inductor (C++) on the fixture project in
tests/verify_fixtures/project. One run (two CPU workers at a time) feeds every test below.

The static findings are planted from the fixture's trailing comments (see model.py's docstring), so the
expectations sit next to the code they are about.
"""
import json
import os
import re
from pathlib import Path

import pytest

from conftest import write_tree
from dynlint.linter.finding import Finding

PROJECT = Path(__file__).resolve().parent / "verify_fixtures" / "project"
# A trailing comment after code (the docstring's legend lines hold only the comment).
MARK = re.compile(r"^\s*[^#\s].*#\s*(finding-recompile|finding|unpredicted|false-positive|never-run)(?::\s*(.+?))?\s*$")
HANG_MARKER = "987654"          # the `sleep` the hanging example leaves behind


def marks():
    """[(kind, gb_type, line)] from the trailing comments of model.py."""
    out = []
    for n, text in enumerate((PROJECT / "model.py").read_text().splitlines(), 1):
        m = MARK.search(text)
        if m:
            out.append((m.group(1), m.group(2) or "", n))
    return out


def planted_findings():
    findings = []
    for kind, gb_type, line in marks():
        if kind == "unpredicted":
            continue                         # nothing predicts it: the run must add DYN901
        code = "DYN599" if kind == "finding-recompile" else "DYN199"   # family 5 = recompile hazards
        findings.append(Finding(path="model.py", line=line, column=4, code=code, message=f"planted {kind}",
                                gb_types=(gb_type,) if gb_type else ()))
    return findings


@pytest.fixture(scope="module")
def report():
    pytest.importorskip("torch")
    from dynlint.runtime_check import run_verify

    return run_verify(PROJECT, ["**/dynlint_examples.py"], device="cpu", timeout=150,
                      static_findings=planted_findings(), jobs=2)


@pytest.fixture(scope="module")
def examples(report):
    return {r.name: r for r in report.examples}


def at(report, line, code=None):
    return [f for f in report.findings if f.path == "model.py" and f.line == line and (code is None or f.code == code)]


pytestmark = pytest.mark.dynamo


# ---- static findings get their status ----------------------------------------------------------------
def test_predicted_breaks_are_confirmed_at_their_lines(report):
    for kind, gb_type, line in marks():
        if kind == "finding":
            (f,) = at(report, line, "DYN199")
            assert f.status == "confirmed", (line, gb_type)
            assert gb_type in dict(f.properties)["verify"]
            assert not at(report, line, "DYN901")          # predicted, so not reported as missed


def test_predicted_recompile_is_confirmed(report):
    (line,) = [n for kind, _, n in marks() if kind == "finding-recompile"]
    (f,) = at(report, line, "DYN599")
    assert f.status == "confirmed" and "mode == 'a'" in dict(f.properties)["verify"]


def test_false_positive_is_not_observed_and_unreached_line_is_unverified(report):
    for kind, _, line in marks():
        if kind == "false-positive":
            assert at(report, line, "DYN199")[0].status == "not observed"
        if kind == "never-run":
            assert at(report, line, "DYN199")[0].status == "unverified"


# ---- what nothing predicted ------------------------------------------------------------------------------
def test_unpredicted_break_becomes_dyn901_with_dynamo_text(report):
    for kind, gb_type, line in marks():
        if kind == "unpredicted":
            (f,) = at(report, line, "DYN901")
            assert f.name == "unpredicted-graph-break" and f.gb_types == (gb_type,)
            assert gb_type in f.message and f.fix                 # Dynamo's hint becomes the fix
            props = dict(f.properties)
            assert props["examples"] == ("data_dependent_branch",) and props["gb_ids"][0].startswith("GB")


def test_first_shape_recompile_is_measured_but_not_a_finding(report, examples):
    """Batch 128 then 256: Dynamo recompiles once and goes dynamic (automatic dynamic shapes). The
    recompile is in the example's results, but it is expected behaviour, not a DYN902 finding."""
    pointwise = examples["pointwise"]
    (rc,) = pointwise.recompiles
    assert "size mismatch at index 0" in rc.reason
    assert at(report, pointwise.function_line, "DYN902") == []


def test_output_mismatch_becomes_dyn903_at_the_example(report, examples):
    differs = examples["compiled_differs"]
    assert differs.agreement.status == "mismatch" and differs.agreement.max_abs_diff == pytest.approx(0.5)
    (f,) = [f for f in report.findings if f.code == "DYN903"]
    assert (f.path, f.line, f.severity, f.name) == ("dynlint_examples.py", differs.line, "error",
                                                    "compiled-output-mismatch")
    assert all(r.agreement.status == "match" for r in report.examples if r.outcome == "ok" and r is not differs)


# ---- measurements ---------------------------------------------------------------------------------------
def test_graphs_breaks_and_frame_skip(examples):
    printed = examples["print_graph_break"]
    assert len(printed.graphs) == 2 and printed.break_sites == 1
    assert printed.graph_breaks[0].gb_types == ("Failed to trace builtin operator",)
    loop = examples["loop_skips_frame"]
    assert len(loop.graphs) == 0                                   # the whole frame fell back to eager
    assert loop.graph_breaks[0].frame_skipped and "graph break in loop" in loop.graph_breaks[0].gb_types


def test_recompile_reason_and_guard_location(examples):
    (rc,) = examples["string_argument_recompiles"].recompiles
    assert rc.function == "by_mode" and rc.reason == "mode == 'a'"
    assert (rc.failures[0].path, rc.path) == ("model.py", "model.py")
    assert rc.span[0] <= rc.failures[0].line <= rc.span[1]


def test_timings_speedup_and_kernels(examples):
    for r in examples.values():
        if r.outcome == "ok":
            assert r.eager_ms > 0 and r.compiled_ms > 0 and r.speedup > 0 and r.compile_s >= 0
            assert r.torch_version and r.device == "cpu" and r.eager_peak_mem_bytes is None
    assert examples["pointwise"].speedup > 1.0                     # 24 elementwise ops fused into one loop
    assert examples["pointwise"].graphs[1].dynamic                 # batch 256 recompiled as dynamic
    mlp = examples["mlp"]
    assert mlp.function == "TinyMLP.forward" and mlp.kernels >= 1
    assert sum(g.extern_kernels for g in mlp.graphs) >= 2          # the two Linear layers: addmm calls


def test_executed_lines_are_recorded(examples):
    executed = examples["data_dependent_branch"].executed_lines()["model.py"]
    assert {n for kind, _, n in marks() if kind == "unpredicted"} <= executed
    assert not any(n in executed for kind, _, n in marks() if kind == "never-run")


# ---- isolation --------------------------------------------------------------------------------------------
def test_failures_are_reported_and_the_run_continues(examples):
    assert examples["segfaults"].outcome == "crashed" and "SIGSEGV" in examples["segfaults"].message
    assert examples["hangs_forever"].outcome == "timeout" and examples["hangs_forever"].wall_s < 40
    assert examples["calls_sys_exit"].outcome == "error" and "sys.exit(3)" in examples["calls_sys_exit"].message
    raised = examples["raises_in_user_code"]
    assert raised.outcome == "error" and "ValueError: boom from user code" in raised.message
    assert raised.phase == "eager"
    broken = examples["never_built"]
    assert broken.outcome == "error" and "module_that_does_not_exist" in broken.message
    assert sum(r.outcome == "ok" for r in examples.values()) == 7


def test_nothing_is_left_running_after_a_timeout(report):
    leftovers = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if HANG_MARKER in cmdline or "hangs_forever" in cmdline:
            leftovers.append(cmdline)
    assert not leftovers


# ---- outputs ----------------------------------------------------------------------------------------------
def test_report_renders_and_serialises(report, tmp_path):
    from dynlint.runtime_check import write_missed_predictions

    text = report.render_text()
    assert "example/function" in text and "speedup" in text and "MISMATCH" in text
    assert all(r.name[:20] in text for r in report.examples)
    d = json.loads(json.dumps(report.to_dict()))
    assert d["device"] == "cpu" and d["torch_version"] and len(d["examples"]) == len(report.examples)
    assert d["summary"]["outcomes"]["ok"] == 7 and d["summary"]["codes"]["DYN903"] == 1
    written = write_missed_predictions(report, tmp_path / "missed.json")
    missed = json.loads((tmp_path / "missed.json").read_text())
    assert written == len(missed["missed"]) >= 1 and missed["torch_version"]
    item = next(m for m in missed["missed"] if m["code"] == "DYN901")
    assert any(">" in s and ".item()" in s for s in item["source"]) and item["properties"]["explanation"]


def test_verify_with_no_example_says_where_it_looked_and_exits_2(cli, tmp_path):
    pytest.importorskip("torch")
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n",
                          "m.py": "import torch\n\n@torch.compile\ndef f(x):\n    return x.item()\n"})
    r = cli("check", ".", "--verify", "--device", "cpu", "--no-cache", cwd=tmp_path, timeout=300)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "--verify found no example to run" in r.stderr and "**/dynlint_examples.py" in r.stderr
    assert str(tmp_path.resolve()) in r.stderr


PLAIN_TRAINING = '''
import torch
import dynlint


class Model(torch.nn.Module):           # the README's pattern: a plain module, no __len__ (unlike Sequential)
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)

    def forward(self, x):
        return torch.relu(self.lin(x))


@dynlint.example(training=True)
def model_training():
    return {"fn": Model(), "inputs": [(torch.randn(4, 16),)] * 2,
            "optimizer": lambda params: torch.optim.AdamW(params, lr=1e-3)}


@dynlint.example(training=True)
def linear_training():
    return torch.nn.Linear(16, 4), [(torch.randn(4, 16),)] * 2
'''


def test_a_training_example_of_a_plain_module_runs(cli, tmp_path):
    """`run = compiled or module` asked bool() of the compiled module, which asks len() of the module:
    `TypeError: Linear does not support len()` for every module but a container."""
    pytest.importorskip("torch")
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "dynlint_examples.py": PLAIN_TRAINING})
    r = cli("check", ".", "--verify", "--device", "cpu", "--no-cache", "--timing-budget", "0.3", "--format", "json",
            cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    examples = {e["name"]: e for e in json.loads(r.stdout)["verify"]["examples"]}
    assert set(examples) == {"model_training", "linear_training"}
    for e in examples.values():
        assert (e["outcome"], e["phase"], e["training"], e["graph_count"]) == ("ok", "done", True, 1), e["message"]
