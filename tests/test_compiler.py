"""dynlint.compiler against real TorchDynamo and Inductor (C++ on this CPU): the graph pass, the backend's
graph records and kernel counts, graph-break and recompile capture, log parsing, and the layering rules."""
import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import torch  # used as a global by the compiled functions below
except ImportError:      # the pure tests still run; the others skip through pytest.importorskip
    torch = None

from dynlint.compiler.kernels import count_kernels
from dynlint.compiler.logparse import parse_graph_break, parse_recompile

ROOT = Path(__file__).resolve().parent.parent
HERE = os.path.realpath(__file__)


def line_of(marker: str) -> int:
    """Line of this file that carries `# <marker>` (keeps the assertions independent of line numbers)."""
    lines = Path(HERE).read_text().splitlines()
    return next(i for i, text in enumerate(lines, 1) if text.rstrip().endswith(f"# {marker}"))


def is_this_file(path: str) -> bool:
    return os.path.realpath(path) == HERE


# ---- user code compiled by the tests (markers: see line_of) ------------------------------------------
def noop_copies(x):
    a = x.contiguous().float()                   # both no-ops for a contiguous float32 input
    b = x.t().contiguous()                       # a real copy: must stay
    c = (a + b).to(torch.float32).contiguous()   # no-op cast, no-op contiguous
    return c.type_as(x) * 2                      # no-op type_as


def breaks_twice(x):
    y = x * 2
    print("graph break")  # mark: print
    if y.sum() > 0:  # mark: branch
        y = y + 1
    return y


def recompiles_on_strings(x, mode):
    return x * len(mode)  # mark: guard


def matmul_then_pointwise(x, w):
    return (x @ w).relu() * 2 + 1  # mark: mm


# ---- the graph pass -----------------------------------------------------------------------------------
@pytest.mark.dynamo
def test_remove_noop_copies_drops_only_noops_and_keeps_outputs_equal():
    pytest.importorskip("torch")
    from dynlint.compiler.backend import DynlintBackend
    from dynlint.compiler.passes import RemoveNoOpCopies

    x = torch.randn(5, 5)
    without, with_pass = DynlintBackend(is_this_file, lower="eager"), DynlintBackend(
        is_this_file, passes=[RemoveNoOpCopies()], lower="eager")
    expected = noop_copies(x)
    torch.testing.assert_close(torch.compile(noop_copies, backend=without)(x), expected, rtol=0, atol=0)
    torch._dynamo.reset()
    torch.testing.assert_close(torch.compile(noop_copies, backend=with_pass)(x), expected, rtol=0, atol=0)

    removed = dict(with_pass.graphs[0].passes)["remove-noop-copies"]
    # contiguous() on x, float(), to(float32), contiguous() on the sum, type_as(x); x.t().contiguous() stays.
    assert removed == 5
    assert with_pass.graphs[0].ops == without.graphs[0].ops - removed


@pytest.mark.dynamo
def test_remove_noop_copies_through_inductor_and_with_dynamic_shapes():
    pytest.importorskip("torch")
    from dynlint.compiler.backend import DynlintBackend
    from dynlint.compiler.passes import make_passes

    torch._dynamo.reset()
    backend = DynlintBackend(is_this_file, passes=make_passes(["remove-noop-copies"]))
    x = torch.randn(6, 6)
    torch.testing.assert_close(torch.compile(noop_copies, backend=backend)(x), noop_copies(x))
    assert backend.graphs[0].passes == (("remove-noop-copies", 5),)
    assert backend.graphs[0].kernels >= 1

    # Symbolic sizes and strides: deciding contiguity would add guards, so the pass leaves the graph alone.
    torch._dynamo.reset()
    dynamic = DynlintBackend(is_this_file, passes=make_passes(["remove-noop-copies"]), lower="eager")
    torch.compile(noop_copies, backend=dynamic, dynamic=True)(x)
    assert dynamic.graphs[0].dynamic and dynamic.graphs[0].passes == (("remove-noop-copies", 0),)


@pytest.mark.dynamo
def test_pass_ignores_graphs_without_example_values():
    pytest.importorskip("torch")
    from dynlint.compiler.passes import RemoveNoOpCopies

    gm = torch.fx.symbolic_trace(noop_copies)   # no FakeTensor metadata: nothing can be proven a no-op
    assert RemoveNoOpCopies()(gm) == 0


def test_unknown_pass_name_lists_the_known_ones():
    pytest.importorskip("torch")
    from dynlint.compiler.passes import make_passes

    with pytest.raises(ValueError, match="remove-noop-copies"):
        make_passes(["fuse-everything"])


# ---- backend records -----------------------------------------------------------------------------------
@pytest.mark.dynamo
def test_backend_records_ops_lines_kernels_and_dynamic_recompile():
    pytest.importorskip("torch")
    from dynlint.compiler.backend import DynlintBackend

    torch._dynamo.reset()
    backend = DynlintBackend(is_this_file)
    compiled = torch.compile(matmul_then_pointwise, backend=backend)
    for n in (8, 16):                        # the second size recompiles into a dynamic graph
        x, w = torch.randn(n, 32), torch.randn(32, 16)
        torch.testing.assert_close(compiled(x, w), matmul_then_pointwise(x, w))
    first, second = backend.graphs
    assert first.lines == ((HERE, line_of("mark: mm")),)
    assert first.ops == 4 and not first.dynamic and second.dynamic
    assert first.kernels >= 1 and first.extern_kernels >= 1       # a fused C++ kernel + the mm library call
    assert first.compile_s > 0


def test_count_kernels_reads_generated_source():
    source = (
        "cpp_fused_add_relu_0 = async_compile.cpp_pybinding(['float*'], r'''...''')\n"
        "triton_poi_fused_mul_1 = async_compile.triton('triton_poi_fused_mul_1', '''...''')\n"
        "def call(args):\n"
        "    extern_kernels.mm(a, b, out=buf0)\n"
        "    extern_kernels.addmm(c, a, b, alpha=1, beta=1, out=buf1)\n"
        "    cpp_fused_add_relu_0(buf0)\n"
    )
    assert count_kernels(source) == (2, 2)


# ---- capture --------------------------------------------------------------------------------------------
@pytest.mark.dynamo
def test_collector_captures_breaks_with_registry_ids_and_user_lines():
    pytest.importorskip("torch")
    from dynlint.compiler.backend import DynlintBackend
    from dynlint.compiler.capture import Collector
    from dynlint.compiler.registry import load_gb_ids

    with Collector(is_this_file) as c:
        backend = DynlintBackend(is_this_file, lower="eager")
        torch.compile(breaks_twice, backend=backend)(torch.ones(3))
    ids = load_gb_ids()
    by_line = {b.line: b for b in c.graph_breaks}
    printed, branched = by_line[line_of("mark: print")], by_line[line_of("mark: branch")]
    assert printed.gb_types == ("Failed to trace builtin operator",)
    assert branched.gb_types == ("Data-dependent branching",)
    for b in (printed, branched):
        assert b.path == HERE and b.function == "breaks_twice" and not b.frame_skipped
        assert b.gb_ids == tuple(ids[t] for t in b.gb_types)        # looked up in the installed registry
        assert b.explanation and b.hints
    assert "print" in printed.explanation
    assert len(backend.graphs) == 3


@pytest.mark.dynamo
def test_collector_captures_recompile_reason_and_guard_line():
    pytest.importorskip("torch")
    from dynlint.compiler.capture import Collector

    with Collector(is_this_file) as c:
        compiled = torch.compile(recompiles_on_strings, backend="eager")
        for mode in ("a", "bb"):
            compiled(torch.ones(2), mode)
    (rc,) = c.recompiles
    assert rc.function == "recompiles_on_strings" and rc.reason == "mode == 'a'"
    assert os.path.realpath(rc.path) == HERE
    guard = rc.failures[0]
    assert guard.line == line_of("mark: guard") and guard.source.startswith("return x * len(mode)")
    assert not c.hit_recompile_limit


@pytest.mark.dynamo
def test_collector_restores_torch_logging_state(monkeypatch):
    pytest.importorskip("torch")
    import logging

    from dynlint.compiler.capture import Collector

    monkeypatch.setenv("TORCH_LOGS", "+dynamo")
    logger = logging.getLogger("torch._dynamo")

    def kinds(handlers):   # set_logs() rebuilds (and may reorder) torch's own handlers: compare kinds
        return sorted(type(h).__name__ for h in handlers)

    before = kinds(logger.handlers)
    with Collector(is_this_file) as c:
        assert c in logger.handlers and "TORCH_LOGS" not in os.environ   # TORCH_LOGS would disable set_logs()
    assert c not in logger.handlers and kinds(logger.handlers) == before
    assert os.environ["TORCH_LOGS"] == "+dynamo"


# ---- log parsing (canned messages: formats of other torch releases) ------------------------------------
CHAINED = '''Graph break in user code at /proj/m.py:17
Graph Break Reason: Failed to handle graph break gracefully. Skipping the function and falling back to eager. Graph break encountered:

Failed to trace builtin operator
  Explanation: Dynamo does not know how to trace builtin operator `print`
  Hint: Avoid calling builtin `print`.
  Hint: Please report an issue to PyTorch.

  Developer debug context: builtin print

 For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html

*** While handling this graph break, another graph break occurred: ***

graph break in loop
  Explanation: torch.compile detected a graph break in a for/while loop.
  Hint: This graph break may have been caused by an earlier graph break.

 For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb7000.html

User code traceback:
  File "/proj/run.py", line 25, in <module>
    g(x)
  File "/proj/m.py", line 17, in g
    print("hi")
'''

OLD_STYLE = '''Graph break (user stack suppressed due to duplicate graph break) in user code at /proj/m.py:9
Reason: Unsupported: builtin: print [<class 'torch._dynamo.variables.constant.ConstantVariable'>] False
'''

RESUME_RECOMPILE = '''Recompiling function torch_dynamo_resume_in_f_at_13 in /proj/m.py:13
    triggered by the following guard failure(s):
    - 1/0: n == 2                                                   # z = y * n  # oj/m.py:14 in torch_dynamo_resume_in_f_at_13
'''

TENSOR_RECOMPILE = '''Recompiling function k in /proj/m.py:22
    triggered by the following guard failure(s):
    - 4/1: tensor 'x' rank mismatch. expected 1, actual 2
    - 4/0: tensor 'x' rank mismatch. expected 1, actual 2
'''


def test_parse_chained_break_and_frame_skip():
    b = parse_graph_break(CHAINED, lambda p: p == "/proj/m.py", {"graph break in loop": "GB7000"})
    assert b.gb_types == ("Failed to trace builtin operator", "graph break in loop")
    assert b.gb_ids == ("GB0059", "GB7000")     # the doc links fill ids the registry lacks
    assert (b.path, b.line, b.function) == ("/proj/m.py", 17, "g")
    assert b.frame_skipped and not b.duplicate
    assert b.hints == ("Avoid calling builtin `print`.", "Please report an issue to PyTorch.")


def test_parse_old_style_duplicate_break():
    b = parse_graph_break(OLD_STYLE, lambda p: p.startswith("/proj/"), {})
    assert b.gb_types == () and b.duplicate
    assert (b.path, b.line) == ("/proj/m.py", 9)       # duplicates carry no traceback: the reported location
    assert b.explanation.startswith("Unsupported: builtin: print")


def test_parse_recompiles_resume_function_and_tensor_guards():
    rc = parse_recompile(RESUME_RECOMPILE)
    assert (rc.function, rc.code_name, rc.line) == ("f", "torch_dynamo_resume_in_f_at_13", 13)
    assert rc.failures[0].guard == "n == 2" and rc.failures[0].source == "z = y * n"
    assert (rc.failures[0].path, rc.failures[0].line) == ("oj/m.py", 14)   # cut path: the worker resolves it
    rc = parse_recompile(TENSOR_RECOMPILE)
    assert rc.reason == "tensor 'x' rank mismatch. expected 1, actual 2" and len(rc.failures) == 2
    assert rc.failures[0].path == "" and rc.failures[0].line == 0
    assert parse_recompile("something else") is None


# ---- layering --------------------------------------------------------------------------------------------
def test_importing_dynlint_and_its_verify_api_does_not_import_torch():
    code = ("import sys, dynlint, dynlint.compiler, dynlint.runtime_check\n"
            "from dynlint.runtime_check import run_verify, cross_check, VerifyReport, VerifyUnavailable\n"
            "from dynlint.compiler import GraphBreak, Recompile, load_gb_ids\n"
            "import dynlint.runtime_check.worker\n"
            "assert load_gb_ids() or True\n"
            "bad = [m for m in sys.modules if m == 'torch' or m.startswith('torch.')]\n"
            "assert not bad, bad[:5]\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr


def _imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
            yield from (f"{node.module}.{a.name}" for a in node.names)


def test_only_the_compiler_package_touches_dynamo_and_inductor():
    offenders = []
    for path in (ROOT / "dynlint").rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        for name in _imports(path):
            internal = name.startswith(("torch._dynamo", "torch._inductor"))
            if internal and not rel.startswith("dynlint/compiler/"):
                offenders.append(f"{rel}: {name}")
            if rel.startswith("dynlint/linter/") and name.startswith("dynlint.compiler"):
                offenders.append(f"{rel}: {name}")
    assert not offenders


SYMBOLIC_RECOMPILE = '''Recompiling function f in /proj/m.py:5
    triggered by the following guard failure(s):
    - 0/1: (((torch.sym_float((-1)*n)) / 5.0)) == (-0.4)  # return y * math.exp(-n / 5.0)  # oj/m.py:7 in f (_dynamo/utils.py:4231 in run_node)
    - 0/0: n == 1                                                   # y = x * n  # oj/m.py:6 in f
'''


def test_parse_a_guard_on_a_symbolic_expression_ending_in_a_parenthesis():
    """Dynamo specialises a dynamic int passed to `math.exp` on the float it makes: the guard's own text ends in
    `(-0.4)`, and the trailing note `(_dynamo/utils.py:... in run_node)` is not part of it; the line is read."""
    rc = parse_recompile(SYMBOLIC_RECOMPILE)
    first = rc.failures[0]
    assert first.guard == "(((torch.sym_float((-1)*n)) / 5.0)) == (-0.4)"
    assert (first.source, first.path, first.line) == ("return y * math.exp(-n / 5.0)", "oj/m.py", 7)
    assert (rc.failures[1].guard, rc.failures[1].line) == ("n == 1", 6)
