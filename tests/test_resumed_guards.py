"""Guards installed again by the frame Dynamo resumes after a graph break (analysis/resumed.py), under real
Dynamo: the resumed frame guards a Python number where it first reads it, so a new value fails a guard at
both reads, and the finding stands at both."""
import pytest

from dynlint.api import check_source

RESUMED = '''
import torch


@torch.compile(backend="eager")
def step(x, table, i):
    a = table[i]
    y = x * a
    print("tick")
    return y + table[i + 1]


def main():
    table = torch.arange(10.0)
    for i in range(3):
        step(torch.ones(3), table, i)
'''


def _line(source: str, text: str) -> int:
    return next(n for n, line in enumerate(source.splitlines(), 1) if text in line)


def test_a_number_is_guarded_again_where_the_resumed_frame_reads_it(tmp_path):
    pytest.importorskip("torch")
    from dynlint.compiler import harness
    path = tmp_path / "resumed.py"
    path.write_text(RESUMED)
    first, again = _line(RESUMED, "a = table[i]"), _line(RESUMED, "return y + table[i + 1]")
    found = sorted(f.line for f in check_source(RESUMED, filename="resumed.py").findings if f.code == "DYN501")
    assert found == [first, again]
    obs = harness.observe(str(path), ["main()"])
    assert obs.error is None
    guarded = [line for r in obs.recompiles for g in r.failures for line in [g.line] if g.guard == "i == 0"]
    assert sorted(set(guarded)) == [first, again]


def test_no_resumed_frame_after_a_break_in_a_loop_or_before_the_first_read():
    """A break inside a loop of the function skips the whole frame (nothing is resumed, nothing guarded: see
    test_skipped_frames.py), and one in a loop further down skips the resumed frame in its turn; a break above
    the first read leaves one guard, at that read."""
    looped = RESUMED.replace('    print("tick")\n', '    for _ in range(2):\n        print("tick")\n')
    codes = [(f.code, f.line) for f in check_source(looped, filename="looped.py").findings if f.code == "DYN501"]
    assert codes == []
    skipped = RESUMED.replace('    return y + table[i + 1]\n',
                              '    for _ in range(2):\n        print("again")\n    return y + table[i + 1]\n')
    lines = [f.line for f in check_source(skipped, filename="skipped.py").findings if f.code == "DYN501"]
    assert lines == [_line(skipped, "a = table[i]")]        # the resumed frame breaks in a loop: skipped too
    early = RESUMED.replace('    a = table[i]\n    y = x * a\n    print("tick")\n',
                            '    print("tick")\n    a = table[i]\n    y = x * a\n')
    lines = [f.line for f in check_source(early, filename="early.py").findings if f.code == "DYN501"]
    assert lines == [_line(early, "a = table[i]")]


def test_noqa_on_the_resumed_read_silences_it_there():
    quiet = RESUMED.replace("return y + table[i + 1]", "return y + table[i + 1]  # noqa: DYN501")
    lines = [f.line for f in check_source(quiet, filename="quiet.py").findings if f.code == "DYN501"]
    assert lines == [_line(quiet, "a = table[i]")]


def test_a_break_in_the_statement_that_reads_it_first(tmp_path):
    """`frac = (x > coef).float().mean().item()`: the comparison reads `coef` before the `.item()` breaks, and
    the frame Dynamo resumes after that statement reads it again: both lines are guarded."""
    pytest.importorskip("torch")
    from dynlint.compiler import harness
    src = RESUMED.replace("def step(x, table, i):\n    a = table[i]\n    y = x * a\n    print(\"tick\")\n",
                          "def step(x, table, i):\n    frac = (x > i).float().mean().item()\n    y = x * frac\n")
    path = tmp_path / "same.py"
    path.write_text(src)
    first, again = _line(src, "frac = (x > i)"), _line(src, "return y + table[i + 1]")
    found = sorted(f.line for f in check_source(src, filename="same.py").findings if f.code == "DYN501")
    assert found == [first, again]
    obs = harness.observe(str(path), ["main()"])
    assert obs.error is None
    guarded = {g.line for r in obs.recompiles for g in r.failures if g.guard == "i == 0"}
    assert guarded == {first, again}


PYTHON_AFTER_BREAK = '''import torch


@torch.compile
def accuracy(pred, labels):
    correct = int((pred == labels).sum())
    return 100.0 * correct / len(labels)


def run():
    accuracy(torch.tensor([1, 2, 3]), torch.tensor([1, 2, 0]))
    accuracy(torch.tensor([1, 2, 3]), torch.tensor([1, 0, 0]))
'''


@pytest.mark.dynamo
def test_a_value_made_at_a_break_is_not_guarded_where_the_resumed_code_does_no_tensor_work(tmp_path):
    """Dynamo keeps the frame it resumes after a break, and its guards, only where that frame has a graph: a
    resumed `return 100.0 * correct / n` is Python alone, so the new `correct` of the second call recompiles
    nothing (DYN510 stays silent); one tensor operation after the break (`* pred.float().mean()`) makes a
    graph, and the value is guarded at its first computation."""
    from dynlint.compiler import harness
    for src, guarded in ((PYTHON_AFTER_BREAK, set()), (PYTHON_AFTER_BREAK.replace(
            "/ len(labels)", "/ len(labels) * pred.float().mean()"), {7})):
        path = tmp_path / "m.py"
        path.write_text(src)
        obs = harness.observe(str(path), ["run()"])
        assert obs.error is None, obs.error
        assert {f.line for r in obs.recompiles for f in r.failures[:1]} == guarded
        found = {f.line for f in check_source(src).findings if f.code == "DYN510"}
        assert found == guarded


BREAK_IN_A_LOOP = '''import torch


@torch.compile
def scaled(x, counts):
    for c in counts:
        n = int(c)
        x = x * (n + 1)
    return x


def run():
    scaled(torch.ones(3), torch.tensor([1, 2]))
    scaled(torch.ones(3), torch.tensor([3, 4]))
'''


@pytest.mark.dynamo
def test_a_value_made_at_a_break_in_a_loop_is_not_guarded(tmp_path):
    """A break inside a loop makes Dynamo skip the whole frame, which then runs eagerly: the values made
    there are guarded nowhere (the second call's new counts recompile nothing) and DYN510 stays silent."""
    from dynlint.compiler import harness
    path = tmp_path / "m.py"
    path.write_text(BREAK_IN_A_LOOP)
    obs = harness.observe(str(path), ["run()"])
    assert obs.error is None, obs.error
    assert obs.recompiles == [] and {b.reported_line for b in obs.breaks} == {7}
    assert [f.line for f in check_source(BREAK_IN_A_LOOP).findings if f.code == "DYN510"] == []


HANDED = '''
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def scale(self, x, n):
        return x * (n + 1)

    def forward(self, x):
        n = int((x > 0).sum())
        y = self.lin(x)
        return self.scale(y, n)


def main():
    m = torch.compile(Gate(), backend="eager")
    m(torch.tensor([[1.0, -1.0, 1.0, 1.0]]))
    m(torch.tensor([[1.0, -1.0, -1.0, 1.0]]))
'''


def test_a_value_made_at_a_break_and_handed_to_a_method_is_guarded_where_the_method_uses_it(tmp_path):
    """Dynamo inlines `self.scale(y, n)` into the frame it resumes after the break and guards `n` at the first
    computation with it there."""
    pytest.importorskip("torch")
    from dynlint.compiler import harness
    path = tmp_path / "handed.py"
    path.write_text(HANDED)
    guard = _line(HANDED, "return x * (n + 1)")
    found = [f.line for f in check_source(HANDED, filename="handed.py").findings if f.code == "DYN510"]
    assert found == [guard]
    obs = harness.observe(str(path), ["main()"])
    assert obs.error is None
    assert sorted(set().union(*obs.guard_lines(str(path)))) == [guard]


def test_a_list_handed_on_is_not_reported_where_the_callee_iterates_it():
    """`for s in sizes` reads the length of `sizes`, which the tensor's shape fixed: not its guard."""
    source = HANDED.replace("    def scale(self, x, n):\n        return x * (n + 1)\n",
                            "    def scale(self, x, sizes):\n        for s in sizes:\n            x = x * s\n"
                            "        return x\n").replace("n = int((x > 0).sum())", "n = (x > 0).sum(0).tolist()")
    assert "for s in sizes" in source and ".tolist()" in source
    lines = [f.line for f in check_source(source, filename="handed.py").findings if f.code == "DYN510"]
    assert _line(source, "for s in sizes:") not in lines


HELD = '''
import time

import torch


def normalise(x):
    if x.sum() > 0:                 # a data-dependent branch: a function that breaks
        return x / x.sum()
    return x


@torch.compile(backend="eager")
def timed(x):
    start = time.perf_counter()
    y = normalise(x.sin())
    return y, time.perf_counter() - start


@torch.compile(backend="eager")
def counted(x):
    n = int(x.argmax())
    y = x.cos()
    print("tick")
    return y, n


@torch.compile(backend="eager")
def elapsed(x):
    start = time.perf_counter()
    took = time.perf_counter() - start
    return x.sin(), took


@torch.compile(backend="eager")
def only_returned(x):
    start = time.perf_counter()
    return x.sin(), start


@torch.compile(backend="eager")
def read_first(x):
    scale = x.abs().max().item()
    y = x / scale
    y = normalise(y)
    return y, scale


def main():
    for i in range(3):
        x = torch.randn(4) + i
        timed(x), counted(x), elapsed(x), only_returned(x), read_first(x)
'''


def test_a_number_made_at_a_break_is_guarded_where_the_graph_breaks_again_while_it_is_needed(tmp_path):
    """DYN520 (analysis/resumed.held_across): the clock's float and `int(t)` are held across the next break (a
    call of a function that breaks, a `print`, the clock read again) and guarded at its line; one only returned
    is not guarded, and one the resumed frame computes with first is guarded at that read (DYN510), not at the
    next break."""
    pytest.importorskip("torch")
    from conftest import dynamo_guard_lines
    found = sorted(f.line for f in check_source(HELD, filename="held.py", preview=True).findings
                   if f.code == "DYN520")
    held = [_line(HELD, "y = normalise(x.sin())"), _line(HELD, 'print("tick")'),
            _line(HELD, "took = time.perf_counter() - start")]
    assert found == held
    guarded = dynamo_guard_lines(tmp_path, HELD)
    assert set(held) <= set(guarded)
    assert _line(HELD, "return x.sin(), start") not in guarded
    assert _line(HELD, "y = normalise(y)") not in guarded and _line(HELD, "y = x / scale") in guarded


def test_the_function_that_breaks_again_may_be_in_another_file_and_an_edit_there_is_followed(tmp_path):
    from dynlint import api
    helper, rest = HELD.split("@torch.compile", 1)
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\n")
    (tmp_path / "helper.py").write_text(helper)
    (tmp_path / "model.py").write_text("import time\n\nimport torch\n\nfrom helper import normalise\n\n\n"
                                       "@torch.compile" + rest)
    cfg = api.load_config([str(tmp_path)], api.known_codes())

    def dyn520():
        return [(f.path, f.line) for f in api.check([str(tmp_path)], cfg, cache=True).findings if f.code == "DYN520"]
    model = (tmp_path / "model.py").read_text()
    expected = [_line(model, "y = normalise(x.sin())"), _line(model, 'print("tick")'),
                _line(model, "took = time.perf_counter() - start")]
    assert dyn520() == [("model.py", line) for line in expected] == dyn520()      # cold, then from the cache
    # the helper no longer breaks: the next break is the clock's second read, in the return
    (tmp_path / "helper.py").write_text(helper.replace("if x.sum() > 0:", "if x.dim() > 0:"))
    expected[0] = _line(model, "return y, time.perf_counter() - start")
    assert dyn520() == [("model.py", line) for line in expected]


def test_no_number_held_across_a_call_not_known_here_or_in_a_generator():
    """A call of a function the analysis cannot see (a wrapper's `fn(*args)`) may break first; a context
    manager's generator is not resumed (no guard at its second clock read: tests/test_frames.py's timing
    wrappers)."""
    opaque = HELD.replace("    y = normalise(x.sin())\n", "    y = x.sin()\n    y = hook(y)\n    y = normalise(y)\n") \
        .replace("def timed(x):", "def timed(x, hook=torch.relu):")
    assert [f.line for f in check_source(opaque, filename="opaque.py", preview=True).findings
            if f.code == "DYN520"] == [_line(opaque, 'print("tick")'), _line(opaque, "took = time.perf_counter()")]
    generator = '''
import contextlib
import time

import torch

TIMES = {}


@contextlib.contextmanager
def timing(name):
    start = time.perf_counter()
    yield
    TIMES[name] = time.perf_counter() - start


@torch.compile(backend="eager")
def step(x):
    with timing("step"):
        return x.sin()
'''
    assert not [f for f in check_source(generator, filename="generator.py", preview=True).findings
                if f.code == "DYN520"]


RETURNED = '''
import torch


def pick(sizes, x) -> int:
    i = int(x.sum().abs()) % len(sizes)       # a break: the caller's graph ends at the call
    return sizes[i]


def normalise(x):
    if x.sum() > 0:
        return x / x.sum()
    return x


@torch.compile(backend="eager")
def step(x):
    size = pick([4, 6, 8], x)
    y = normalise(x.sin())
    return torch.nn.functional.pad(y, (0, size))


def main():
    for i in range(3):
        step(torch.full((4,), float(i)))       # size 4, 6, 8
'''


def test_a_number_a_breaking_function_returns_is_guarded_where_the_caller_breaks_again(tmp_path):
    """`size = pick(...)`, a function that breaks and says it returns an int: the caller's resumed frame receives
    the number and, breaking again at `normalise(...)` with `size` still needed, guards it there."""
    pytest.importorskip("torch")
    from conftest import dynamo_guard_lines
    at = _line(RETURNED, "y = normalise(x.sin())")
    assert [f.line for f in check_source(RETURNED, filename="returned.py", preview=True).findings
            if f.code == "DYN520"] == [at]
    assert at in dynamo_guard_lines(tmp_path, RETURNED, lineless=False)


INDEXED = '''
import torch


class Sched:
    def __init__(self):
        self.a = torch.linspace(1, 0, 10)
        self.b = torch.linspace(0.5, 0.1, 10)

    def step(self, x, t):
        at = self.a[t]
        y = x * at
        if y.sum() > 0:
            scale = t * 0.5
            bt = self.b[t] * scale
        else:
            bt = self.b[t] * 2
        return y + bt


def main():
    s = Sched()
    f = torch.compile(s.step, backend="eager")
    for t in torch.arange(4):
        f(torch.ones(3), t)
'''


def test_a_0d_tensor_index_is_guarded_again_where_the_resumed_frame_indexes_with_it(tmp_path):
    """A 0-d tensor `t` indexing a tensor is turned into an int and guarded there (`t.item() == 0`); after a
    break, the resumed frame guards it again where it next indexes with it (`self.b[t]`), not where it first
    reads it (`t * 0.5` needs no int)."""
    pytest.importorskip("torch")
    from conftest import dynamo_guard_lines
    expected = [_line(INDEXED, "at = self.a[t]"), _line(INDEXED, "bt = self.b[t] * scale")]
    assert dynamo_guard_lines(tmp_path, INDEXED) == expected
    found = sorted(f.line for f in check_source(INDEXED, filename="probe.py").findings if f.code == "DYN501")
    assert found == expected
