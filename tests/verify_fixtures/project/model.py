"""User code that the verify tests compile. The trailing comments are the tests' expectations:

    # finding: GB_TYPE          the test plants a static finding here predicting this break -> confirmed
    # finding-recompile         the test plants a static recompile finding here -> confirmed
    # unpredicted: GB_TYPE      Dynamo breaks here and no finding predicts it -> DYN901
    # false-positive: GB_TYPE   a planted finding on a line that runs but does not break -> not observed
    # never-run: GB_TYPE        a planted finding on a line no example reaches -> unverified
"""
import torch
from torch import nn


def print_break(x):
    y = x.sin()
    print("between two graphs")  # finding: Failed to trace builtin operator
    return y.cos()


def print_in_loop(x):
    for i in range(2):
        print("step", i)  # finding: graph break in loop
        x = x + 1
    return x


def data_dependent(x):
    y = x * 2
    if y.sum() > 0:  # finding: Data-dependent branching
        y = y + 1
    scale = y.max().item()  # unpredicted: Unsupported Tensor.item() call with capture_scalar_outputs=False
    return y * scale


def by_mode(x, mode: str):
    return x * len(mode)  # finding-recompile


def pointwise_heavy(x):
    # 24 cheap elementwise ops: eager reads and writes the tensor 24 times, Inductor fuses them into one loop.
    for _ in range(6):
        x = x * 1.01 + 0.1
        x = torch.relu(x) - 0.05 * x  # false-positive: Data-dependent branching
    return x


def compile_sensitive(x):
    # A deliberate eager/compiled difference: is_compiling() is constant-folded to True while tracing.
    if torch.compiler.is_compiling():
        return x + 1.5
    return x + 1


class TinyMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 8)

    def forward(self, x):
        return self.fc2(torch.nn.functional.gelu(self.fc1(x)).contiguous())


def never_called(x):
    return torch.nonzero(x)  # never-run: Dynamic shape operator
