"""State a compiled function reads without taking it as an argument, changed between its calls, under real
Dynamo: a closure's cell made by a factory of compiled closures (every closure shares one code object, so
Dynamo guards the cell's value, DYN501), and an attribute of an object the compiled function closes over and
calls (`calib(signal)` runs `Calibration.__call__`, which reads `self.gain`; DYN514). Each finding stands at the line
Dynamo's recompile log names."""
import pytest

from conftest import dynamo_guard_lines, line_of
from dynlint.api import check_source

FACTORY = '''
import math

import torch


def make_scaler(factor):
    @torch.compile(backend="eager")
    def scale(x):
        return x * factor + math.sqrt(factor)

    return scale


def main():
    x = torch.randn(4)
    for factor in (1.0, 4.0, 9.0):
        make_scaler(factor)(x)
'''

CLOSED_OVER = '''
import torch


class Calibration:
    def __init__(self):
        self.offset = 0.0
        self.gain = 1.0

    def update(self, offset, gain):
        self.offset = offset
        self.gain = gain

    def __call__(self, signal):
        return signal * self.gain + self.offset


def main():
    calib = Calibration()

    @torch.compile(backend="eager")
    def denoise(signal):
        return calib(signal).clamp(-1, 1)

    signal = torch.randn(6)
    denoise(signal)
    calib.update(0.25, 3.0)
    denoise(signal)
'''


# a closure cell that a setter of the same closure changes between calls (`nonlocal weight; weight = w`)
SETTER = '''
import torch


def make_step():
    weight = 0.5
    verbose = False

    @torch.compile(backend="eager")
    def step(x):
        y = x.sin() * weight
        if verbose:
            y = y + 1
        return y

    def set_weight(w):
        nonlocal weight
        weight = w

    def set_verbose(on):
        nonlocal verbose
        verbose = on

    return step, set_weight, set_verbose


def main():
    step, set_weight, set_verbose = make_step()
    x = torch.randn(4)
    for epoch in range(3):
        step(x)
        set_weight(0.5 / (epoch + 2))
'''



@pytest.mark.parametrize("source, code, guard", [
    (FACTORY, "DYN501", "return x * factor + math.sqrt(factor)"),
    (CLOSED_OVER, "DYN514", "return signal * self.gain + self.offset"),
    (SETTER, "DYN514", "y = x.sin() * weight"),
    (SETTER.replace("set_weight(0.5 / (epoch + 2))", "set_verbose(epoch % 2 == 0)"), "DYN514", "if verbose:"),
    (CLOSED_OVER.replace("calib.update(0.25, 3.0)", "calib.gain = 3.0"), "DYN514",
     "return signal * self.gain + self.offset"),
])
def test_state_read_without_an_argument_is_reported_at_the_guard(tmp_path, source, code, guard):
    pytest.importorskip("torch")
    found = [f.line for f in check_source(source, filename="probe.py").findings if f.code == code]
    assert found == [line_of(source, guard)]
    assert dynamo_guard_lines(tmp_path, source) == [line_of(source, guard)]


@pytest.mark.parametrize("source, code, same", [
    (FACTORY, "DYN501", FACTORY.replace("(1.0, 4.0, 9.0)", "(1.0, 1.0, 1.0)").replace(
        "for factor in", "for _ in").replace("make_scaler(factor)(x)", "make_scaler(2.0)(x)")),
    (CLOSED_OVER, "DYN514", CLOSED_OVER.replace("    denoise(signal)\n    calib.update(0.25, 3.0)\n",
                                                "    calib.update(0.25, 3.0)\n    denoise(signal)\n")),
    (SETTER, "DYN514", SETTER.replace("        set_weight(0.5 / (epoch + 2))\n", "").replace(
        "    step, set_weight, set_verbose = make_step()\n",
        "    step, set_weight, set_verbose = make_step()\n    set_weight(0.25)\n")),
])
def test_state_that_does_not_change_between_calls_is_not_reported(tmp_path, source, code, same):
    """The same number for every closure, a setter called once before the first call: one graph."""
    pytest.importorskip("torch")
    assert same != source
    assert not [f for f in check_source(same, filename="probe.py").findings if f.code == code]
    assert dynamo_guard_lines(tmp_path, same) == []


def test_a_cell_set_from_a_parameter_of_a_factory_whose_closure_is_compiled_by_a_bare_decorator(tmp_path):
    """`T = temperature` (a parameter with a float default) and `@torch.compile` with no arguments: the setter
    `nonlocal T; T = t` called from the loop changes a float cell, guarded where the closure reads it."""
    pytest.importorskip("torch")
    source = SETTER.replace("def make_step():\n    weight = 0.5", "def make_step(w0=0.5):\n    weight = w0").replace(
        '@torch.compile(backend="eager")', "@torch.compile")
    expected = [line_of(source, "y = x.sin() * weight")]
    assert dynamo_guard_lines(tmp_path, source) == expected
    assert [f.line for f in check_source(source, filename="probe.py").findings if f.code == "DYN514"] == expected
