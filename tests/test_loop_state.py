"""DYN519 under real Dynamo: a Python int a `while` loop counts, when the loop's condition breaks the graph, is
guarded where the resumed body first computes with it; the finding must stand at that line, and nowhere when
Dynamo guards nothing."""
import textwrap

import pytest

from conftest import dynamo_guard_lines, line_of
from dynlint import api

HALVE = textwrap.dedent("""
    import torch


    @torch.compile
    def halve(x, tol):
        steps = 0
        while x.norm() > 1.0 + tol:
            x = x * 0.5
            steps += 1
        return x, steps


    def main():
        halve(torch.full((4,), 3.0), 1e-3)
        halve(torch.full((4,), 0.1), 1e-3)
""")


def _found(source: str) -> list:
    return sorted(f.line for f in api.check_source(source, filename="probe.py").findings if f.code == "DYN519")


def test_a_counter_is_guarded_where_the_resumed_body_first_counts_it(tmp_path):
    guards = dynamo_guard_lines(tmp_path, HALVE)
    assert guards == [line_of(HALVE, "steps += 1")]
    assert _found(HALVE) == guards


def test_the_first_computation_with_the_counter_is_the_guard(tmp_path):
    """`scale = 2 ** -steps` reads the counter before the body counts it: the guard stands there."""
    source = HALVE.replace("        x = x * 0.5\n", "        scale = 2.0 ** -steps\n        x = x * 0.5 * scale\n")
    guards = dynamo_guard_lines(tmp_path, source)
    assert guards == [line_of(source, "scale = 2.0 ** -steps")]
    assert _found(source) == guards


@pytest.mark.parametrize("change", [
    # the loop inside another loop: its break skips the whole frame, nothing is resumed or guarded
    ("    steps = 0\n", "    steps = 0\n    for _ in range(1):\n"),
    # a condition of Python values only: no break, one graph with the loop unrolled
    ("while x.norm() > 1.0 + tol:", "while steps < 3:"),
    # a counter kept in a tensor: an input of the resumed body like `x`, not specialised
    ("steps = 0", "steps = torch.zeros(())"),
])
def test_nothing_is_reported_where_dynamo_guards_no_counter(tmp_path, change):
    old, new = change
    source = HALVE.replace(old, new)
    if old == "    steps = 0\n":         # indent the loop under the new outer one
        head, _, rest = source.partition(new)
        body, _, tail = rest.partition("    return x, steps\n")
        source = head + new + textwrap.indent(body, "    ") + "    return x, steps\n" + tail
    assert dynamo_guard_lines(tmp_path, source, lineless=False) == []
    assert _found(source) == []
