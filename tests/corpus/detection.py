"""Detection post-processing: score filtering, box decoding, a greedy NMS, per-class statistics."""
import torch
import torch.nn as nn


def decode_boxes(deltas, anchors):
    widths = anchors[:, 2] - anchors[:, 0]
    heights = anchors[:, 3] - anchors[:, 1]
    cx = anchors[:, 0] + 0.5 * widths + deltas[:, 0] * widths
    cy = anchors[:, 1] + 0.5 * heights + deltas[:, 1] * heights
    w = widths * deltas[:, 2].clamp(max=4.0).exp()
    h = heights * deltas[:, 3].clamp(max=4.0).exp()
    return torch.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], dim=-1)


def box_iou(a, b):
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    lt = torch.max(a[:, None, :2], b[None, :, :2])  # ok
    rb = torch.min(a[:, None, 2:], b[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter / (area_a[:, None] + area_b[None, :] - inter)


class PostProcess(nn.Module):
    def __init__(self, score_threshold: float = 0.3, iou_threshold: float = 0.5):
        super().__init__()
        self.score_threshold = score_threshold
        self.iou_threshold = iou_threshold

    def forward(self, deltas, scores, anchors):
        boxes = decode_boxes(deltas, anchors)
        keep = scores > self.score_threshold
        boxes, scores = boxes[keep], scores[keep]  # expect: DYN402
        order = scores.argsort(descending=True)
        return boxes[order], scores[order]


class StaticPostProcess(nn.Module):
    """The same filter with fixed shapes: suppressed scores are zeroed, top-k keeps a static count."""

    def __init__(self, score_threshold: float = 0.3, k: int = 4):
        super().__init__()
        self.score_threshold = score_threshold
        self.k = k

    def forward(self, deltas, scores, anchors):
        boxes = decode_boxes(deltas, anchors)
        scores = torch.where(scores > self.score_threshold, scores, torch.zeros_like(scores))  # ok
        top, idx = scores.topk(self.k)
        ious = box_iou(boxes[idx], boxes[idx])
        suppressed = (ious.triu(1) > 0.5).any(0)
        return boxes[idx], top * ~suppressed


class ClassStats(nn.Module):
    def forward(self, labels, scores):
        present = torch.unique(labels)  # expect: DYN401
        means = torch.stack([scores[labels == c].mean() for c in present])  # expect: DYN402
        return present, means


def __dynlint_calls__():
    torch.manual_seed(0)
    anchors = torch.tensor([[0.0, 0.0, 2.0, 2.0], [1.0, 1.0, 3.0, 3.0], [0.0, 1.0, 2.0, 4.0],
                            [2.0, 2.0, 5.0, 5.0], [1.0, 0.0, 4.0, 2.0]])
    deltas = torch.randn(5, 4) * 0.1
    scores = torch.tensor([0.9, 0.1, 0.5, 0.8, 0.2])
    torch.compile(PostProcess())(deltas, scores, anchors)
    torch.compile(StaticPostProcess())(deltas, scores, anchors)
    torch.compile(ClassStats())(torch.tensor([0, 1, 1, 2]), torch.tensor([0.5, 0.2, 0.4, 0.9]))
