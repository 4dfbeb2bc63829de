"""Callables compiled in the forms users write, and the state they read, under real Dynamo: the finding
stands at the line the guard that fails names."""
import pytest

from conftest import dynamo_breaks, line_of
from dynlint.api import check_source

CALLABLE_OBJECT = '''import torch


class Config:
    def __init__(self):
        self.threshold = 0.0


class PostProcessor:
    def __init__(self, cfg):
        self.cfg = cfg

    def __call__(self, logits):
        labels = logits.argmax(1)
        if self.cfg.threshold > 0:
            labels = torch.where(logits.max(1).values >= self.cfg.threshold, labels, -1)
        return labels


def main():
    cfg = Config()
    post = torch.compile(PostProcessor(cfg))
    for step in range(3):
        post(torch.randn(2, 3, 4))
        cfg.threshold = 0.1 + step
'''


@pytest.mark.dynamo
def test_a_compiled_callable_object_guards_the_config_it_keeps(tmp_path):
    """`torch.compile(PostProcessor(cfg))` compiles the object's `__call__` (not an nn.Module: no `forward`);
    it keeps `cfg`, and the loop's `cfg.threshold = ...` fails the guard at the read in `__call__`."""
    from dynlint.compiler import harness
    path = tmp_path / "m.py"
    path.write_text(CALLABLE_OBJECT)
    obs = harness.observe(str(path), ["main()"])
    assert obs.error is None, obs.error
    assert {f.line for r in obs.recompiles for f in r.failures[:1]} == {15}
    found = [(f.line, f.code, f.related[0][1]) for f in check_source(CALLABLE_OBJECT).findings]
    assert found == [(15, "DYN514", 25)]


NARROWED = '''import torch
from torch import nn


class Observer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("peak", torch.ones(()))

    def forward(self, x):
        self.peak.copy_(torch.maximum(self.peak, x.abs().max()))
        return x

    def scale(self):
        return 127 / float(self.peak)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.obs = Observer()

    def forward(self, x):
        return self.obs(self.fc(x))


def main():
    net = Net()
    net(torch.randn(2, 4))
    return {name: torch.compile(m.scale)() for name, m in net.named_modules() if isinstance(m, Observer)}
'''


@pytest.mark.dynamo
@pytest.mark.parametrize("test", ["isinstance(m, Observer)", "isinstance(m, (Observer, nn.Identity))"])
def test_a_method_compiled_through_a_name_an_isinstance_test_narrows(tmp_path, test):
    """`torch.compile(m.scale)` for the modules `isinstance(m, Observer)` keeps: as a type checker narrows `m`
    there, the compiled method is `Observer.scale`, and its `float()` of a tensor breaks the graph there."""
    source = NARROWED.replace("isinstance(m, Observer)", test)
    line = line_of(source, "return 127 / float(self.peak)")
    assert {ln for ln, _ in dynamo_breaks(tmp_path, source)} == {line}
    found = [f for f in check_source(source, filename="m.py").findings if f.code == "DYN202"]
    assert [f.line for f in found] == [line]
