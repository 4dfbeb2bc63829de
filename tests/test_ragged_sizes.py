"""Tensors whose rows depend on their values, handed to a frame Dynamo compiles on its own (DYN509,
analysis/ragged.py): each probe runs under real Dynamo, and dynlint's finding must stand at the line of the guard
that failed first (the frame's new size, a guard with no line: at its `def`), with the guard `2 <= x.size()[0]`
(an entry of 0 or 1 rows, after the size went dynamic) as its related location, and nowhere else; where the rows
come from a loop that runs a tensor down to one row, that guard's line is a finding of its own."""
import textwrap

import pytest

from conftest import dynamo_guard_lines, line_of
from dynlint import api

CLUSTER = textwrap.dedent("""
    import torch


    def spread(rows):
        return rows[:, 0].amax() - rows[:, 0].amin()


    def gaps(center, rows):
        scale = spread(rows)
        return ((rows - center) ** 2).sum(1) / (scale + 1)


    @torch.compile
    def cluster(points):
        left = points
        centers = []
        while left.shape[0] > 0:
            centers.append(left[0])
            if left.shape[0] == 1:
                break
            d = gaps(left[0], left[1:])
            left = left[1:][d > 0.05]
        return torch.stack(centers)


    def main():
        torch.manual_seed(1)
        cluster(torch.rand(10, 2) * 4)
""")

LEVELS = textwrap.dedent("""
    import torch


    def pool(feats, rois, scale: float = 1.0):
        if rois.numel() == 0:
            return feats.new_zeros(0)
        return feats.sum() * rois[:, 1:].mean(1) * scale


    @torch.compile
    def per_level(feats, rois, levels):
        out = []
        for level in range(4):
            idx = torch.where(levels == level)[0]
            out.append(pool(feats, rois=rois[idx].float()))
        return out


    def main():
        per_level(torch.rand(2, 3), torch.rand(10, 5), torch.tensor([0, 0, 0, 0, 1, 1, 2, 3, 3, 3]))
""")


def _found(source: str) -> list:
    """(line, related lines) of each DYN509 finding."""
    return sorted((f.line, tuple(r[1] for r in f.related)) for f in api.check_source(source, filename="probe.py").findings
                  if f.code == "DYN509")


def test_the_guard_stands_where_an_inlined_callee_first_works_with_the_rows(tmp_path):
    """`gaps(center, rows)` is entered from a loop Dynamo skips (a mask in it), with `left[1:]` (fewer rows every
    iteration, down to 1): a new size recompiles `gaps`, then Dynamo guards `2 <= rows.size()[0]` in `spread`,
    inlined into `gaps`, where it first works with the rows."""
    lines = dynamo_guard_lines(tmp_path, CLUSTER, lineless=False)
    assert lines == [line_of(CLUSTER, "return rows[:, 0].amax()")]
    assert dynamo_guard_lines(tmp_path, CLUSTER) == sorted([line_of(CLUSTER, "def gaps"), *lines])
    # the loop runs `left` down (it ends only when `left` is empty or has one row): the entry with one row is
    # part of an ordinary run, so its guard is a finding of its own, related to the `def`
    assert _found(CLUSTER) == sorted([(line_of(CLUSTER, "def gaps"), tuple(lines)),
                                      (lines[0], (line_of(CLUSTER, "def gaps"),))])


@pytest.mark.parametrize("exit_early", ["if len(centers) >= 3:\n            break",
                                        "if centers[-1].sum() > 100:\n            return torch.stack(centers)"])
def test_a_loop_that_can_stop_before_the_rows_run_out_keeps_the_guard_related(exit_early):
    """Another way out of the loop (enough centers, a value test): the rows need not come down to one, so the
    `2 <= rows.size()[0]` guard stays the related location of the finding at the `def`."""
    source = CLUSTER.replace("if left.shape[0] == 1:\n            break", exit_early + "\n        if left.shape[0] == 1:"
                             "\n            break")
    assert source != CLUSTER
    guard = line_of(source, "return rows[:, 0].amax()")
    assert _found(source) == [(line_of(source, "def gaps"), (guard,))]


def test_rows_of_each_level_recompile_at_the_first_test_of_them(tmp_path):
    """Rows picked by `torch.where(levels == level)` (4, 2, 1, 3 rows), passed as a keyword through `.float()`."""
    lines = dynamo_guard_lines(tmp_path, LEVELS, lineless=False)
    assert lines == [line_of(LEVELS, "if rois.numel() == 0:")]
    assert dynamo_guard_lines(tmp_path, LEVELS) == sorted([line_of(LEVELS, "def pool"), *lines])
    assert _found(LEVELS) == [(line_of(LEVELS, "def pool"), tuple(lines))]


def test_rows_of_a_fixed_count_do_not_recompile(tmp_path):
    """The same loop handing three rows each time: one size, no recompile, no finding."""
    source = LEVELS.replace("idx = torch.where(levels == level)[0]", "idx = torch.arange(level, level + 3)")
    assert dynamo_guard_lines(tmp_path, source) == []
    assert _found(source) == []


def test_each_frame_given_data_dependent_rows_is_reported():
    """Two helpers of one file, each entered from a loop Dynamo skips with rows a mask picked: one finding each."""
    source = LEVELS.replace("        out.append(pool(feats, rois=rois[idx].float()))\n",
                            "        out.append(pool(feats, rois=rois[idx].float()))\n"
                            "        out.append(clip(rois[idx]))\n")
    source = source.replace("@torch.compile\n", "def clip(rows):\n    return rows.clamp(0, 1).sum()\n\n\n"
                            "@torch.compile\n", 1)
    assert source.count("clip(") == 2
    assert [line for line, _ in _found(source)] == [line_of(source, "def pool"), line_of(source, "def clip")]
