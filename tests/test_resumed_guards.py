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
    """A break inside a loop of the function skips the whole frame (nothing is resumed), and so does one in a
    loop further down (the resumed frame is skipped in its turn); a break above the first read leaves one
    guard, at that read."""
    looped = RESUMED.replace('    print("tick")\n', '    for _ in range(2):\n        print("tick")\n')
    codes = [(f.code, f.line) for f in check_source(looped, filename="looped.py").findings if f.code == "DYN501"]
    assert codes == [("DYN501", _line(looped, "a = table[i]"))]
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
