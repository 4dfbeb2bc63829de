"""A compiled function called from a loop over a display of rows (DYN505): each call gets the next row, so
rows of two structures fail each other's guards as two call sites would. Under real Dynamo, the finding stands
where the recompile log names the guard: for dicts, the first read of a key one row has and the other lacks
(a read of a key both have guards only that key)."""
import pytest

from conftest import dynamo_guard_lines, line_of
from dynlint.api import check_source

ROWS = '''
import torch


def masked(inputs):
    out = inputs["x"] * 2
    if "mask" in inputs:
        out = out * inputs["mask"]
    return out


def main():
    opt = torch.compile(masked, backend="eager")
    x = torch.randn(4)
    for inputs in [{"x": x}, {"x": x, "mask": x}]:
        opt(inputs)
'''

NONE_ROWS = '''
import torch


def scale(x, w):
    y = x * 2
    if w is not None:
        y = y * w
    return y


def main():
    opt = torch.compile(scale, backend="eager")
    x = torch.randn(4)
    weights = (None, x)
    for w in weights:
        opt(x, w)
'''




@pytest.mark.parametrize("source, guard", [(ROWS, 'if "mask" in inputs:'), (NONE_ROWS, "if w is not None:")])
def test_rows_of_two_structures_are_reported_at_the_guard(tmp_path, source, guard):
    pytest.importorskip("torch")
    found = [f.line for f in check_source(source, filename="probe.py").findings if f.code == "DYN505"]
    assert found == [line_of(source, guard)]
    assert dynamo_guard_lines(tmp_path, source) == [line_of(source, guard)]


def test_rows_of_one_structure_recompile_nothing_and_are_not_reported(tmp_path):
    pytest.importorskip("torch")
    source = ROWS.replace('[{"x": x}, {"x": x, "mask": x}]', '[{"x": x, "mask": x + 1}, {"x": x * 2, "mask": x - 1}]')
    assert source != ROWS
    assert not [f for f in check_source(source, filename="probe.py").findings if f.code == "DYN505"]
    assert dynamo_guard_lines(tmp_path, source) == []
