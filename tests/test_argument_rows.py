"""A compiled function called from a loop over a display of rows (DYN505): each call gets the next row, so
rows of two structures fail each other's guards as two call sites would. Under real Dynamo, the finding stands
where the recompile log names the guard: for dicts, the first read of a key one row has and the other lacks
(a read of a key both have guards only that key). A row is also what each producer a loop picks in turn makes
(functions from a list, the arms of a conditional)."""
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



PICKED = '''
import torch


def masked(batch):
    out = batch["x"] * 2
    if "mask" in batch:
        out = out * batch["mask"]
    return out


def plain_batch():
    return {"x": torch.randn(4)}


def masked_batch():
    batch = {"x": torch.randn(4), "mask": torch.ones(4)}
    return batch


def main():
    opt = torch.compile(masked, backend="eager")
    sources = [plain_batch, masked_batch]
    for step in range(4):
        batch = sources[step % 2]()
        opt(batch)
'''

# the same producers as the two arms of a conditional
CHOSEN = PICKED.replace("sources[step % 2]()", "plain_batch() if step % 2 else masked_batch()")


@pytest.mark.parametrize("source, guard", [(ROWS, 'if "mask" in inputs:'), (NONE_ROWS, "if w is not None:"),
                                           (PICKED, 'if "mask" in batch:'), (CHOSEN, 'if "mask" in batch:')])
def test_rows_of_two_structures_are_reported_at_the_guard(tmp_path, source, guard):
    pytest.importorskip("torch")
    found = [f.line for f in check_source(source, filename="probe.py").findings if f.code == "DYN505"]
    assert found == [line_of(source, guard)]
    assert dynamo_guard_lines(tmp_path, source) == [line_of(source, guard)]


def test_producers_of_one_structure_recompile_nothing_and_are_not_reported(tmp_path):
    pytest.importorskip("torch")
    source = PICKED.replace('{"x": torch.randn(4)}', '{"x": torch.randn(4), "mask": torch.zeros(4)}')
    assert source != PICKED
    assert not [f for f in check_source(source, filename="probe.py").findings if f.code == "DYN505"]
    assert dynamo_guard_lines(tmp_path, source) == []


def test_rows_of_one_structure_recompile_nothing_and_are_not_reported(tmp_path):
    pytest.importorskip("torch")
    source = ROWS.replace('[{"x": x}, {"x": x, "mask": x}]', '[{"x": x, "mask": x + 1}, {"x": x * 2, "mask": x - 1}]')
    assert source != ROWS
    assert not [f for f in check_source(source, filename="probe.py").findings if f.code == "DYN505"]
    assert dynamo_guard_lines(tmp_path, source) == []
