"""A frame Dynamo compiles on its own, entered with the caller's input (no grad) and with a module's output (grad
in grad mode): the `requires_grad` guard fails at the second entry and the frame compiles once more
(analysis/grad_entries.py, DYN509). The guard has no line: Dynamo names the frame's first line, or the line of
the break where the frame does no tensor work before it (only the frame it resumes there is compiled)."""
import pytest

from conftest import dynamo_guard_lines, line_of
from dynlint.api import check_source

TWO_LAYERS = '''
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        print("block")
        return h.relu()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = Block()
        self.second = Block()

    def forward(self, x):
        x = torch.relu(x)
        h = self.first(x)
        return self.second(torch.relu(h))


def main():
    net = torch.compile(Net(), backend="eager")
    for _ in range(2):
        net(torch.randn(2, 4)).sum().backward()
'''

# the break before any tensor work: only the frame resumed at the break is compiled, guarded there
BREAK_FIRST = TWO_LAYERS.replace('        h = self.fc(x)\n        print("block")\n        return h.relu()',
                                 '        print("block")\n        return self.fc(x).relu()')

# a loop that hands each layer the last one's output, the input at the first
STACK = '''
import torch
from torch import nn


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        h = self.lin(x)
        print("layer")
        return h.relu()


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Layer() for _ in range(3)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def main():
    m = torch.compile(Stack(), backend="eager")
    m(torch.ones(2, 3)).sum().backward()
'''


def _found(source):
    return [f.line for f in check_source(source, filename="probe.py").findings
            if f.code == "DYN509" and "requires grad" in f.message]


@pytest.mark.parametrize("source, guard", [(TWO_LAYERS, "    def forward(self, x):"),
                                           (BREAK_FIRST, '        print("block")'),
                                           (STACK, "    def forward(self, x):")])
def test_input_then_a_modules_output_recompiles_the_frame_once(tmp_path, source, guard):
    pytest.importorskip("torch")
    line = line_of(source, guard)           # (the first `forward`: the layer's)
    assert _found(source) == [line]
    assert dynamo_guard_lines(tmp_path, source) == [line]


STEM = ("        self.first = Block()\n", "        self.stem = nn.Linear(4, 4)\n        self.first = Block()\n")


@pytest.mark.parametrize("source, changes", [
    (TWO_LAYERS, [STEM, ("        x = torch.relu(x)\n", "        x = torch.relu(self.stem(x))\n")]),
    (STACK, [("        for layer in self.layers:\n", "        x = self.layers[0].lin(x) * 0 + x\n"
              "        for layer in self.layers:\n")]),
])
def test_a_modules_output_at_every_entry_recompiles_nothing_and_is_not_reported(tmp_path, source, changes):
    pytest.importorskip("torch")
    changed = source
    for change in changes:
        assert change[0] in changed
        changed = changed.replace(*change)
    assert dynamo_guard_lines(tmp_path, changed) == []
    assert _found(changed) == []
