"""bench/zoo: the collector's log parsing and one real collection, and the scorer on synthetic records.

The scorer and parser tests need neither torch nor any model library; the collector run needs torch only (a
toy package stands in for a model library) and is skipped without it."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ZOO = ROOT / "bench" / "zoo"
sys.path.insert(0, str(ZOO))

import collect  # noqa: E402
import score  # noqa: E402


# ---- the guard pattern, on Dynamo's own recompile messages (torch 2.13) ----------------------------------
HINT_LOG = """Recompiling function f in /tmp/zoo5/hint2.py:13
    triggered by the following guard failure(s):
    - 0/0: ___check_type_id(obj, 94425474467584), type=<class '__main__.A'>  # return x * obj.scale  # mp/zoo5/hint2.py:14 in f (HINT: type A)
    - User stack trace:
    -   File "/tmp/zoo5/hint2.py", line 14, in f
    -     return x * obj.scale"""
CLOSURE_LOG = """Recompiling function outer in /tmp/zoo5/hint2.py:24
    triggered by the following guard failure(s):
    - 1/0: G['fn'].__closure__[0].cell_contents == 2                     # return x * k  # mp/zoo5/hint2.py:21 in inner (HINT: guard on "k")"""
ITEM_LOG = """Recompiling function step in /site-packages/diffusers/schedulers/scheduling_ddim.py:384
    triggered by the following guard failure(s):
    - 0/0: timestep.item() == 900  # alpha_prod_t = self.alphas_cumprod[timestep]  # diffusers/schedulers/scheduling_ddim.py:448 in step (_dynamo/utils.py:4231 in run_node)"""
PLAIN_LOG = """Recompiling function g in /tmp/zoo5/hint.py:10
    triggered by the following guard failure(s):
    - 1/0: k == 2                                                   # return x * k  # mp/zoo5/hint.py:11 in g
    - 1/1: tensor 'x' size mismatch at index 0. expected 2, actual 3"""


class FakePaths:
    """The file names as collect.Paths gives them, for a package at /tmp/zoo5 (or /site-packages/diffusers)."""

    def by_suffix(self, tail):
        return tail.split("/")[-1]

    def rel(self, filename):
        return filename.rsplit("/", 1)[-1]

    short = rel


def failures(log_text):
    log = collect.DynamoLog(FakePaths())
    log.phase = "shape2"
    log._recompile(log_text)
    return log.recompiles[0]["guard_failures"]


@pytest.mark.parametrize("text, guard, source, line, hint", [
    (HINT_LOG, "___check_type_id(obj, 94425474467584), type=<class '__main__.A'>", "return x * obj.scale", 14, "type A"),
    (CLOSURE_LOG, "G['fn'].__closure__[0].cell_contents == 2", "return x * k", 21, 'guard on "k"'),
    (ITEM_LOG, "timestep.item() == 900", "alpha_prod_t = self.alphas_cumprod[timestep]", 448, None),
    (PLAIN_LOG, "k == 2", "return x * k", 11, None),
])
def test_guard_line_with_or_without_a_parenthesis_after_it(text, guard, source, line, hint):
    first = failures(text)[0]
    assert (first["guard"], first["source"], first["line"], first.get("hint")) == (guard, source, line, hint)
    assert first["file"]


def test_size_guards_have_no_line_and_stack_lines_are_not_guards():
    assert [(g["entry"], g["line"]) for g in failures(PLAIN_LOG)] == [("1/0", 11), ("1/1", None)]
    assert len(failures(HINT_LOG)) == 1          # "- User stack trace:" lines are not guard failures


# ---- rederive.py: the guard lines the old pattern dropped ------------------------------------------------
def test_rederive_finds_the_source_line_in_the_recompiled_file(tmp_path):
    import rederive

    (tmp_path / "m.py").write_text("def forward(x):\n    y = x\n    bsz, n = x.shape[:2]\n    bsz, n = x.shape[:2]\n")
    lost = {"entry": "7/2", "guard": "___check_type_id(x, 1)", "source": "bsz, n = x.shape[:2]", "file": None,
            "line": None}
    gone = dict(lost, source="not in the file")
    recs = [{"recompiles": [{"file": "m.py", "line": 1, "guard_failures": [lost, gone]}]}]
    assert rederive.rederive(recs, tmp_path) == (1, 1)
    assert (lost["file"], lost["line"], lost["rederived"]) == ("m.py", 3, True)
    assert gone["file"] is None


# ---- the scorer on synthetic records and a tiny source tree -----------------------------------------------
def record(model, breaks=(), recompiles=(), traced=None, status="ok"):
    return {"model": model, "mode": "eval", "cls": model, "status": status,
            "breaks": [{"file": f, "line": n, "gb_types": ["Data-dependent branching"], "frame_skipped": False}
                       for f, n in breaks],
            "recompiles": [{"fn": "forward", "file": f, "line": 1, "phase": "shape1",
                            "guard_failures": [{"entry": "0/0", "guard": "self.flag == True", "file": f, "line": n}]}
                           for f, n in recompiles] +
                          [{"fn": "forward", "file": "m.py", "line": 1, "phase": "shape2", "guard_failures": [
                              {"entry": "0/1", "guard": "tensor 'x' size mismatch at index 0. expected 2, actual 3",
                               "file": None, "line": None}]}],
            "traced": traced or {}, "partial": {}}


def write_results(path, library, records):
    header = {"header": True, "torch": "2.13.0", library: "1.0", "python": "3.11.7"}
    path.write_text("".join(json.dumps(r) + "\n" for r in [header, *records]))
    return str(path)


def finding(library, line, code="DYN101", end_line=None):
    return {"path": f"{library}/m.py", "line": line, "end_line": end_line or line, "column": 0, "end_column": 10,
            "code": code, "message": "..."}


@pytest.fixture
def zoo(tmp_path):
    """Library `alpha`: break sites at m.py:10 (two models) and :20 (one), a recompile site at :30; lines 1-40
    traced. Library `beta`: one break site at m.py:5, nothing else traced."""
    alpha = write_results(tmp_path / "alpha-1.0.jsonl", "alpha", [
        record("a1", breaks=[("m.py", 10), ("m.py", 20)], recompiles=[("m.py", 30)], traced={"m.py": "1-40"}),
        record("a2", breaks=[("m.py", 10)], traced={"m.py": "1-40"}),
        record("a3", breaks=[("m.py", 99)], status="eager_error"),           # not compiled: no labels
    ])
    beta = write_results(tmp_path / "beta-1.0.jsonl", "beta", [record("b1", breaks=[("m.py", 5)], traced={"m.py": "5"})])
    trees = {lib: tmp_path / lib for lib in ("alpha", "beta")}
    findings = {"alpha": [score.load_findings({"findings": [
                    finding("alpha", 10),                 # right: a break site
                    finding("alpha", 29, end_line=31),    # right: the recompile site inside its span
                    finding("alpha", 35),                 # false alarm: traced, nothing happened there
                    finding("alpha", 50),                 # unverified: Dynamo never traced line 50
                    finding("gamma", 10)]}, "alpha")][0],  # another library's path: not alpha's
                "beta": score.load_findings({"findings": [finding("beta", 6)]}, "beta")}    # unverified: never traced
    return alpha, beta, trees, findings


def test_verdicts_and_recalls_of_one_library(zoo):
    alpha, _, trees, findings = zoo
    labels = score.Labels([alpha], trees)
    d = score.score(labels, findings["alpha"])["default"]
    assert (d["right"], d["false"], d["unverified"]) == (2, 1, 1)
    assert (d["found"], d["sites"]) == (1, 2)                   # per site: :10 of :10 and :20
    assert (d["events_found"], d["events"]) == (2, 3)           # per record: a1's :10 and a2's :10 of three
    assert (d["rc_found"], d["rc_sites"]) == (1, 1)
    assert labels.size_recompiles == 2 and labels.tensor_recompiles == 0
    line = score.library_line("alpha", labels, score.score(labels, findings["alpha"]))
    assert line.startswith("alpha: covered-line precision 0.67, break-site recall 0.50, recompile recall 1.00 "
                           "(per record: break 0.67, recompile 1.00; 2 right, 1 false alarms, 1 unverified")


def test_one_line_per_library_then_the_overall_figures(zoo):
    alpha, beta, trees, findings = zoo
    per_library = [(lib, score.Labels([path], trees), None) for lib, path in (("alpha", alpha), ("beta", beta))]
    per_library = [(lib, lab, score.score(lab, findings[lib])) for lib, lab, _ in per_library]
    labels = score.Labels([alpha, beta], trees)
    text = score.render(labels, score.score(labels, findings["alpha"] + findings["beta"]), "cmd", per_library)
    lines = [line.strip() for line in text.splitlines()]
    assert lines.index(next(l for l in lines if l.startswith("alpha: "))) < \
        lines.index(next(l for l in lines if l.startswith("beta: "))) < lines.index("covered-line precision: 0.67")
    assert next(l for l in lines if l.startswith("beta: ")).startswith(
        "beta: covered-line precision n/a, break-site recall 0.00, recompile recall n/a")
    assert "break-site recall: 0.33" in lines           # alpha's :10 of alpha :10, :20 and beta :5
    assert "recompile recall: 1.00" in lines
    assert text.startswith("Zoo: alpha 1.0 (torch 2.13.0), beta 1.0 (torch 2.13.0)")


def test_the_newest_results_file_of_each_library(tmp_path, monkeypatch):
    (tmp_path / "results").mkdir()
    for name, lib in (("alpha-1.9.jsonl", "alpha"), ("alpha-1.10.jsonl", "alpha"), ("beta-2.0.jsonl", "beta")):
        write_results(tmp_path / "results" / name, lib, [])
    monkeypatch.setattr(score, "HERE", tmp_path)
    assert [os.path.basename(p) for p in score.newest_results()] == ["alpha-1.10.jsonl", "beta-2.0.jsonl"]
    assert [os.path.basename(p) for p in score.newest_results("beta")] == ["beta-2.0.jsonl"]


# ---- one collection with real Dynamo: a toy library ------------------------------------------------------
TOY = '''
    import torch

    PACKAGE = "zoo_toy"


    class Toy(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x, flag):
            y = self.lin(x)
            if flag:
                y = y * 2
            torch._dynamo.graph_break()
            return y.relu()


    def versions():
        return {"zoo_toy": "0.1"}


    def jobs(sample=False):
        return [("toy", "Toy", ("train",))]


    def build(model, cls_name, mode):
        from libs import Case
        toy = Toy()
        x = torch.randn(2, 4)
        return Case(fn=toy, calls=[((x, True), {}), ((x, False), {})], module=toy, params=24)
'''


def test_collector_records_a_real_break_recompile_and_traced_lines(tmp_path):
    pytest.importorskip("torch")
    pkg = tmp_path / "zoo_toy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent(TOY))
    out = tmp_path / "zoo_toy-0.1.jsonl"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, str(ZOO / "collect.py"), "--library", "zoo_toy", "--out", str(out),
                           "--jobs", "1", "--timeout", "300"], env=env, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stderr
    header, rec = [json.loads(line) for line in out.read_text().splitlines()]
    assert header["zoo_toy"] == "0.1" and "torch" in header
    assert rec["status"] == "ok", rec
    source = (pkg / "__init__.py").read_text().splitlines()
    line_of = {text.strip(): n for n, text in enumerate(source, 1)}
    assert [(b["file"], b["line"]) for b in rec["breaks"]] == [("__init__.py", line_of["torch._dynamo.graph_break()"])]
    guards = [g for rc in rec["recompiles"] for g in rc["guard_failures"] if g["file"]]
    assert ("__init__.py", line_of["if flag:"]) in [(g["file"], g["line"]) for g in guards]
    traced = score.parse_ranges(rec["traced"]["__init__.py"])
    assert line_of["y = self.lin(x)"] in traced and line_of["if flag:"] in traced
    assert line_of["y = y * 2"] in score.parse_ranges(rec["executed"]["__init__.py"])
    # a second run resumes: nothing left to do
    again = subprocess.run([sys.executable, str(ZOO / "collect.py"), "--library", "zoo_toy", "--out", str(out)],
                           env=env, capture_output=True, text=True, timeout=400)
    assert "1 done, 0 to run" in again.stdout


def test_a_recompile_prediction_is_refuted_only_where_nothing_recompiled(tmp_path):
    # Dynamo names one failing guard per recompile: in a record whose frame recompiled for another guard (here the
    # second call's new shapes), a second changed value is never seen. A recompile rule's finding on a traced line
    # is a false alarm only if a record with no recompile traced it; a break rule's finding, wherever it is traced
    quiet = dict(record("q1", traced={"m.py": "1-20"}), recompiles=[])
    path = write_results(tmp_path / "alpha-1.0.jsonl", "alpha", [
        record("r1", traced={"m.py": "1-40"}),            # recompiled (sizes): lines 1-40 traced
        quiet,                                            # nothing recompiled: lines 1-20 traced
    ])
    labels = score.Labels([path], {"alpha": tmp_path / "alpha"})
    found = score.load_findings({"findings": [finding("alpha", 10, "DYN306"), finding("alpha", 30, "DYN306"),
                                              finding("alpha", 30, "DYN101")]}, "alpha")
    verdicts = [(f["line"], f["code"], v) for v, f in score.score(labels, found)["verdicts"]]
    assert verdicts == [(10, "DYN306", "false alarm"), (30, "DYN306", "unverified"), (30, "DYN101", "false alarm")]
