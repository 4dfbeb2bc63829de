"""Tensors whose rows depend on their values, handed to a frame Dynamo compiles on its own (DYN509,
analysis/ragged.py): each probe runs under real Dynamo, and dynlint's finding must stand at the line of the guard
that failed first (the frame's new size, a guard with no line: at its `def`), with the guard `2 <= x.size()[0]`
(an entry of 0 or 1 rows, after the size went dynamic) as its related location, and nowhere else."""
import textwrap

from conftest import dynamo_guard_lines, line_of
from dynlint import api

NMS = textwrap.dedent("""
    import torch


    def area(boxes):
        return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


    def iou(a, b):
        area_a = area(a)
        area_b = area(b)
        lt = torch.max(a[:, None, :2], b[:, :2])
        rb = torch.min(a[:, None, 2:], b[:, 2:])
        wh = (rb - lt).clamp(min=0)
        inter = wh[..., 0] * wh[..., 1]
        return inter / (area_a[:, None] + area_b - inter)


    @torch.compile
    def select(boxes, scores):
        order = scores.argsort(descending=True)
        keep = []
        while order.numel() > 0:
            i = order[0]
            keep.append(i)
            if order.numel() == 1:
                break
            ious = iou(boxes[i].unsqueeze(0), boxes[order[1:]]).squeeze(0)
            order = order[1:][ious <= 0.5]
        return torch.stack(keep)


    def main():
        torch.manual_seed(0)
        b = torch.rand(12, 4) * 10
        b[:, 2:] += b[:, :2]
        select(b, torch.rand(12))
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
    """`iou(a, b)` is entered from a loop Dynamo skips, with `boxes[order[1:]]` (fewer rows every iteration, down
    to 1): a new size recompiles `iou`, then Dynamo guards `2 <= b.size()[0]` in `area`, inlined into `iou`, where
    it first works with `b`."""
    lines = dynamo_guard_lines(tmp_path, NMS, lineless=False)
    assert lines == [line_of(NMS, "return (boxes[:, 2]")]
    assert dynamo_guard_lines(tmp_path, NMS) == sorted([line_of(NMS, "def iou"), *lines])
    assert _found(NMS) == [(line_of(NMS, "def iou"), tuple(lines))]


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
