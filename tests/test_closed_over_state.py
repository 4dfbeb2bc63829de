"""State a compiled function reads without taking it as an argument, changed between its calls, under real
Dynamo: a closure's cell made by a factory of compiled closures (every closure shares one code object, so
Dynamo guards the cell's value, DYN501), and an attribute of an object the compiled function closes over and
calls (`norm(x)` runs `Normalizer.__call__`, which reads `self.std`; DYN514). Each finding stands at the line
Dynamo's recompile log names."""
import pytest

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


class Normalizer:
    def __init__(self):
        self.mean = 0.0
        self.std = 1.0

    def set_stats(self, mean, std):
        self.mean = mean
        self.std = std

    def __call__(self, x):
        return (x - self.mean) / self.std


def main():
    norm = Normalizer()

    @torch.compile(backend="eager")
    def fn(x):
        return norm(x).tanh()

    x = torch.randn(6)
    fn(x)
    norm.set_stats(0.5, 2.0)
    fn(x)
'''


def _line(source: str, text: str) -> int:
    return next(n for n, line in enumerate(source.splitlines(), 1) if text in line)


def _guards(tmp_path, source: str) -> list:
    from dynlint.compiler import harness
    path = tmp_path / "probe.py"
    path.write_text(source)
    obs = harness.observe(str(path), ["main()"])
    assert obs.error is None
    return sorted({g.line for r in obs.recompiles for g in r.failures if g.line})


@pytest.mark.parametrize("source, code, guard", [
    (FACTORY, "DYN501", "return x * factor + math.sqrt(factor)"),
    (CLOSED_OVER, "DYN514", "return (x - self.mean) / self.std"),
    (CLOSED_OVER.replace("norm.set_stats(0.5, 2.0)", "norm.std = 2.0"), "DYN514",
     "return (x - self.mean) / self.std"),
])
def test_state_read_without_an_argument_is_reported_at_the_guard(tmp_path, source, code, guard):
    pytest.importorskip("torch")
    found = [f.line for f in check_source(source, filename="probe.py").findings if f.code == code]
    assert found == [_line(source, guard)]
    assert _guards(tmp_path, source) == [_line(source, guard)]


@pytest.mark.parametrize("source, code, same", [
    (FACTORY, "DYN501", FACTORY.replace("(1.0, 4.0, 9.0)", "(1.0, 1.0, 1.0)").replace(
        "for factor in", "for _ in").replace("make_scaler(factor)(x)", "make_scaler(2.0)(x)")),
    (CLOSED_OVER, "DYN514", CLOSED_OVER.replace("    fn(x)\n    norm.set_stats(0.5, 2.0)\n",
                                                "    norm.set_stats(0.5, 2.0)\n    fn(x)\n")),
])
def test_state_that_does_not_change_between_calls_is_not_reported(tmp_path, source, code, same):
    """The same number for every closure, a setter called once before the first call: one graph."""
    pytest.importorskip("torch")
    assert same != source
    assert not [f for f in check_source(same, filename="probe.py").findings if f.code == code]
    assert _guards(tmp_path, same) == []
