"""`torch.compile(factory(...))` compiles the function the factory defines and returns (a closure): its body is
traced code, checked like any compiled function's (analysis/regions.py targets_of_value; the index's
FunctionInfo.returns_def). Proven under real Dynamo at the finding's line."""
import textwrap

from conftest import dynamo_guard_lines, line_of
from dynlint import api

SOURCE = textwrap.dedent("""
    import torch


    def make_accumulator():
        seen = []

        def acc(x):
            seen.append(x.shape[0])
            return x.sum() / sum(seen)

        return acc


    def main():
        f = torch.compile(make_accumulator(), backend="eager")
        for n in (2, 3, 4):
            f(torch.randn(n))
""")


def test_the_closure_a_factory_returns_is_compiled(tmp_path):
    guards = dynamo_guard_lines(tmp_path, SOURCE, lineless=False)
    assert guards == [line_of(SOURCE, "seen.append")]
    found = [(f.code, f.line) for f in api.check_source(SOURCE, filename="probe.py").findings]
    assert found == [("DYN305", guards[0])]


def test_a_factory_returning_something_else_compiles_nothing_of_its_own():
    """A factory whose returns are not all one nested def (here, also a lambda) is not followed: which function
    a call gives is not known."""
    source = SOURCE.replace("    return acc\n", "    return acc if seen is not None else (lambda x: x)\n")
    assert source != SOURCE
    assert [f for f in api.check_source(source, filename="probe.py").findings] == []
