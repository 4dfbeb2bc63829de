"""`torch.compile(factory(...))` compiles the function the factory defines and returns (a closure): its body is
traced code, checked like any compiled function's (analysis/regions.py targets_of_value; the index's
FunctionInfo.returns_def). Proven under real Dynamo at the finding's line."""
import textwrap

from conftest import dynamo_guard_lines, line_of
from dynlint import api

SOURCE = textwrap.dedent("""
    import torch


    def make_logger():
        widths = []

        def step(x):
            widths.append(x.shape[-1])
            return x.mean() * len(widths)

        return step


    def main():
        g = torch.compile(make_logger(), backend="eager")
        for n in (2, 3, 4):
            g(torch.ones(1, n))
""")


def test_the_closure_a_factory_returns_is_compiled(tmp_path):
    guards = dynamo_guard_lines(tmp_path, SOURCE, lineless=False)
    assert guards == [line_of(SOURCE, "widths.append")]
    found = [(f.code, f.line) for f in api.check_source(SOURCE, filename="probe.py").findings]
    assert found == [("DYN305", guards[0])]


def test_a_factory_returning_something_else_compiles_nothing_of_its_own():
    """A factory whose returns are not all one nested def (here, also a lambda) is not followed: which function
    a call gives is not known."""
    source = SOURCE.replace("    return step\n", "    return step if widths is not None else (lambda x: x)\n")
    assert source != SOURCE
    assert [f for f in api.check_source(source, filename="probe.py").findings] == []
