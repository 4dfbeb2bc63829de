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
    def refine(z, eps):
        rounds = 0
        while (z * z).sum() > eps:
            z = z - 0.25 * z
            rounds += 1
        return z, rounds


    def main():
        refine(torch.full((3,), 2.0), 0.5)
        refine(torch.full((3,), 0.1), 0.5)
""")


def _found(source: str) -> list:
    return sorted(f.line for f in api.check_source(source, filename="probe.py").findings if f.code == "DYN519")


def test_a_counter_is_guarded_where_the_resumed_body_first_counts_it(tmp_path):
    guards = dynamo_guard_lines(tmp_path, HALVE)
    assert guards == [line_of(HALVE, "rounds += 1")]
    assert _found(HALVE) == guards


def test_the_first_computation_with_the_counter_is_the_guard(tmp_path):
    """`step = 0.25 / (rounds + 1)` reads the counter before the body counts it: the guard stands there."""
    source = HALVE.replace("        z = z - 0.25 * z\n", "        step = 0.25 / (rounds + 1)\n        z = z - step * z\n")
    assert source != HALVE
    guards = dynamo_guard_lines(tmp_path, source)
    assert guards == [line_of(source, "step = 0.25 / (rounds + 1)")]
    assert _found(source) == guards


@pytest.mark.parametrize("change", [
    # the loop inside another loop: its break skips the whole frame, nothing is resumed or guarded
    ("    rounds = 0\n", "    rounds = 0\n    for _ in range(1):\n"),
    # a condition of Python values only: no break, one graph with the loop unrolled
    ("while (z * z).sum() > eps:", "while rounds < 3:"),
    # a counter kept in a tensor: an input of the resumed body like `x`, not specialised
    ("rounds = 0", "rounds = torch.zeros(())"),
])
def test_nothing_is_reported_where_dynamo_guards_no_counter(tmp_path, change):
    old, new = change
    source = HALVE.replace(old, new)
    assert source != HALVE
    if old == "    rounds = 0\n":         # indent the loop under the new outer one
        head, _, rest = source.partition(new)
        body, _, tail = rest.partition("    return z, rounds\n")
        source = head + new + textwrap.indent(body, "    ") + "    return z, rounds\n" + tail
    assert dynamo_guard_lines(tmp_path, source, lineless=False) == []
    assert _found(source) == []


SCAN = textwrap.dedent("""
    import torch


    @torch.compile
    def trim(scores, thr):
        i, j = 0, scores.shape[0] - 1
        while i < j and scores[i] < thr:
            i += 1
        while j > i and scores[j] < thr:
            j -= 1
        return scores[i:j + 1] * 2


    def main():
        trim(torch.tensor([0.1, 0.2, 0.9, 0.8, 0.3, 0.1]), 0.5)
""")


def test_a_scan_whose_test_indexes_a_tensor_with_the_counter(tmp_path):
    """The bodies only count (`i += 1`), but each resumed body runs on into the test up to its break
    (`scores[i] < thr`), tensor work with a graph: both counters are guarded, the one made from a size
    (`scores.shape[0] - 1`) too, where each body counts."""
    guards = dynamo_guard_lines(tmp_path, SCAN)
    assert guards == [line_of(SCAN, "i += 1"), line_of(SCAN, "j -= 1")]
    assert _found(SCAN) == guards
