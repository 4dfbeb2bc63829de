"""bench/zoo: the collector's log parsing and one real collection.

The parser tests need neither torch nor any model library; the collector run needs torch only (a toy package
stands in for a model library) and is skipped without it."""
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
