"""Properties over generated programs: any syntactically valid program is checked without an internal error
(and, being valid, without a parse error), the answer is deterministic, and -j1 and -jN give the same answer.

Programs come from two sources: hypothesmith (Python's whole grammar, little torch) and a small grammar of
torch-model-like code below (compiled functions, nn.Module forwards, helpers in other files, tensor
conditions, host syncs, side effects, closures, match, ...), which reaches the rules far more often.
"""
import ast
import json
import tempfile
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from dynlint import api
from dynlint.linter import sources
from dynlint.linter.config import Config
from dynlint.report import Options, Report, json_format

# The same examples on every run; no shrinking (a generated project is readable as it is, and shrinking one
# can take minutes).
FAST = settings(deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None,
                phases=(Phase.explicit, Phase.generate))

# ---- a small grammar of torch-model-like code -------------------------------------------------------
NAMES = st.sampled_from(["x", "y", "h", "n", "i", "self.w", "self.layers[0]", "CONFIG"])
CALLEES = st.sampled_from(["torch.relu", "torch.nonzero", "torch.where", "torch.cat", "F.softmax", "torch.randn",
                           "torch.zeros_like", "torch.isnan", "helper", "self.block", "np.asarray", "len", "print",
                           "torch.compiler.is_compiling", "time.time", "random.random", "x.new_zeros"])
METHODS = st.sampled_from(["item", "sum", "tolist", "numpy", "nonzero", "any", "size", "cpu", "max", "unique",
                           "view", "append", "backward", "to"])
ATOMS = st.one_of(NAMES, st.integers(-2, 300).map(str),
                  st.sampled_from(["None", "True", "1.5", "'s'", "x.shape[0]", "len(x)", "x.dim()", "[]", "{}"]))


def _expr(e):
    return st.one_of(
        st.tuples(CALLEES, st.lists(e, max_size=3)).map(lambda t: f"{t[0]}({', '.join(t[1])})"),
        st.tuples(e, METHODS).map(lambda t: f"({t[0]}).{t[1]}()"),
        st.tuples(e, st.sampled_from(["+", "*", "-", "@", "/", "//", "%", "**"]), e).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(e, st.sampled_from(["<", ">", "==", "is", "in", "is not"]), e).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(e, st.sampled_from(["and", "or"]), e).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(e, e, e).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
        e.map(lambda a: f"(lambda z: {a})(x)"),
        e.map(lambda a: f"[{a} for _ in range(2)]"),
        NAMES.map(lambda a: f'f"{{{a}!r:>4}}"'),
        e.map(lambda a: f"{a}[0]"),
        e.map(lambda a: f"(not {a})"),
        e.map(lambda a: f"(w := {a})"),
    )


EXPR = st.recursive(ATOMS, _expr, max_leaves=6)
TARGETS = st.sampled_from(["x", "y", "h", "self.w", "self.cache", "out[0]", "CONFIG['k']"])


def _indent(lines):
    return ["    " + ln for ln in lines]


def _block(depth: int):
    simple = st.one_of(
        st.tuples(TARGETS, EXPR).map(lambda t: [f"{t[0]} = {t[1]}"]),
        st.tuples(TARGETS, EXPR).map(lambda t: [f"{t[0]} += {t[1]}"]),
        EXPR.map(lambda e: [f"print({e})"]),
        EXPR.map(lambda e: [e]),
        EXPR.map(lambda e: [f"assert {e}, 'msg'"]),
        EXPR.map(lambda e: [f"return {e}"]),
        EXPR.map(lambda e: [f"self.cache.append({e})"]),
        EXPR.map(lambda e: [f"raise ValueError({e})"]),
        st.just(["pass"]),
        st.just(["import numpy as np", "y = np.asarray(x)"]),
    )
    if depth == 0:
        return st.lists(simple, min_size=1, max_size=3).map(lambda bs: [ln for b in bs for ln in b])
    inner = _block(depth - 1)
    compound = st.one_of(
        st.tuples(EXPR, inner, inner).map(lambda t: [f"if {t[0]}:", *_indent(t[1]), "else:", *_indent(t[2])]),
        st.tuples(EXPR, inner, EXPR, inner).map(
            lambda t: [f"if {t[0]}:", *_indent(t[1]), f"elif {t[2]}:", *_indent(t[3])]),
        st.tuples(EXPR, inner).map(lambda t: [f"for i in range({t[0]}):", *_indent(t[1])]),
        st.tuples(EXPR, inner).map(lambda t: [f"while {t[0]}:", *_indent(t[1] + ["break"])]),
        inner.map(lambda b: ["with torch.no_grad():", *_indent(b)]),
        st.tuples(inner, inner).map(lambda t: ["try:", *_indent(t[0]), "except Exception as e:", *_indent(t[1])]),
        inner.map(lambda b: ["def inner(x):", *_indent(b + ["return x"]), "y = inner(x)"]),
        st.tuples(EXPR, inner, inner).map(
            lambda t: [f"match {t[0]}:", "    case 0 | 1:", *_indent(_indent(t[1])),
                       "    case [a, *rest]:", *_indent(_indent(t[2]))]),
    )
    return st.lists(st.one_of(simple, compound), min_size=1, max_size=3).map(lambda bs: [ln for b in bs for ln in b])


BLOCK = _block(2)


@st.composite
def modules(draw, k: int):
    """Module number k of a project: imports a helper from module k-1 (a cross-file region)."""
    lines = ["import time", "import random", "import torch", "import torch.nn as nn",
             "import torch.nn.functional as F", "CONFIG = {'k': 1}"]
    if k:
        lines.append(f"from mod{k - 1} import helper as helper")
    else:
        lines += ["def helper(x, *args):", *_indent(draw(BLOCK)), "    return x"]
    lines += [f"class Model{k}(nn.Module):", "    def __init__(self):", "        super().__init__()",
              "        self.w = torch.randn(3)", "        self.cache = []",
              "        self.layers = nn.ModuleList([nn.Linear(3, 3)])",
              "    def block(self, x):", *_indent(_indent(draw(BLOCK))), "        return x",
              "    def forward(self, x, y=None):", "        h = n = i = out = x",
              *_indent(_indent(draw(BLOCK))), "        return self.block(x)"]
    deco = draw(st.sampled_from(["@torch.compile", "@torch.compile(fullgraph=True)", "@torch.compiler.disable", ""]))
    lines += [deco, "def step(x, y=None):", "    h = n = i = out = x", *_indent(draw(BLOCK)), "    return x"]
    lines += [f"fast = torch.compile(Model{k}())", "fast(torch.randn(3))", "step(torch.randn(3))",
              "@torch.compile", "def known(x):", "    return x.item()"]          # DYN201 on the last line
    src = "\n".join(ln for ln in lines if ln) + "\n"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compile(src, f"mod{k}.py", "exec")          # valid by construction; say so loudly if not
    return src


def project(n_distinct: int):
    return st.tuples(*[modules(k) for k in range(n_distinct)])


# ---- running dynlint in-process ----------------------------------------------------------------
def check(files: dict, jobs: int = 1, regions: str = "all"):
    with tempfile.TemporaryDirectory() as d:
        root = Path(d).resolve()
        for name, src in files.items():
            (root / name).write_text(src, encoding="utf-8")
        result = api.check([str(root)], Config(root=root, regions=regions), jobs=jobs)
        report = Report(result.findings, result.files, result.errors, Config(root=root))
        doc = json.loads(json_format.render_report(report, Options()))
    return result, doc


def assert_sane(result, files: dict):
    bad = [f for f in result.findings if f.code in ("DYN000", "DYN001")]
    assert not bad, bad[0].message
    for f in result.findings:
        n_lines = len(sources.source_lines(files[f.path])) or 1
        assert 1 <= f.line <= n_lines and f.column >= 0, f


@settings(FAST, max_examples=25)
@given(project(2), st.sampled_from(["auto", "all"]))
def test_torch_like_programs_check_without_errors_and_deterministically(mods, regions):
    files = {f"mod{k}.py": src for k, src in enumerate(mods)}
    first, doc1 = check(files, regions=regions)
    assert_sane(first, files)
    _, doc2 = check(files, regions=regions)
    assert doc1 == doc2


@settings(FAST, max_examples=5)
@given(project(3))
def test_j1_and_jn_give_the_same_answer(mods):
    # 18 files: enough for worker processes (fewer than 16 run in-process)
    files = {f"mod{k}.py": mods[k % 3].replace(f"from mod{k % 3 - 1} import", f"from mod{k - 1} import")
             for k in range(18)}
    serial, doc1 = check(files, jobs=1)
    assert_sane(serial, files)
    _, doc2 = check(files, jobs=3)
    assert doc1 == doc2
    last = {name: src.count("\n") for name, src in files.items()}      # every file was really checked
    assert {f.path for f in serial.findings if f.code == "DYN201" and f.line == last[f.path]} == set(files)


try:
    import hypothesmith
except ImportError:          # pragma: no cover - the `test` extra installs it
    hypothesmith = None


@pytest.mark.skipif(hypothesmith is None, reason="needs hypothesmith (pip install -e '.[test]')")
def test_any_valid_python_checks_without_errors():
    @settings(FAST, max_examples=40)
    @given(hypothesmith.from_grammar())
    def run(source):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(source)
        files = {"m.py": source}
        first, doc1 = check(files)
        assert_sane(first, files)
        _, doc2 = check(files)
        assert doc1 == doc2

    run()


def _excluded_by_fnmatch(rel, patterns):
    """The meaning of `exclude`, one pattern and one part at a time with fnmatch (what linter/files.py compiles)."""
    import fnmatch
    parts = rel.split("/")
    for pat in patterns:
        pat = pat.rstrip("/")
        if fnmatch.fnmatch(rel, pat) or fnmatch.fnmatch(rel, pat + "/*") or rel.startswith(pat + "/"):
            return True
        if "/" not in pat and any(fnmatch.fnmatch(p, pat) for p in parts):
            return True
    return False


_SEGMENT = st.text(alphabet="ab.c_-", min_size=1, max_size=4)
_GLOB = st.text(alphabet="ab.*?[]/", min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(rel=st.lists(_SEGMENT, min_size=1, max_size=4).map("/".join),
       patterns=st.lists(st.one_of(_GLOB, st.lists(_SEGMENT, min_size=1, max_size=3).map("/".join)), max_size=4))
def test_compiled_exclude_patterns_mean_what_fnmatch_says(rel, patterns):
    from dynlint.linter.files import _excluded
    assert _excluded(rel, patterns) == _excluded_by_fnmatch(rel, patterns)
