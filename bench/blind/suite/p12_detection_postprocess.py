"""Object detection post-processing: box decoding, score filtering, greedy NMS, size filtering."""
import torch
import torch.nn as nn


def box_area(b):
    return (b[:, 2] - b[:, 0]).clamp(min=0) * (b[:, 3] - b[:, 1]).clamp(min=0)


def box_iou(a, b):
    lt = torch.maximum(a[:, None, :2], b[None, :, :2])
    rb = torch.minimum(a[:, None, 2:], b[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter / (box_area(a)[:, None] + box_area(b)[None, :] - inter + 1e-9)


def decode(anchors, deltas, clip=4.135):
    wa = anchors[:, 2] - anchors[:, 0]
    ha = anchors[:, 3] - anchors[:, 1]
    cx = anchors[:, 0] + 0.5 * wa + deltas[:, 0] * wa
    cy = anchors[:, 1] + 0.5 * ha + deltas[:, 1] * ha
    w = wa * torch.exp(deltas[:, 2].clamp(max=clip))
    h = ha * torch.exp(deltas[:, 3].clamp(max=clip))
    return torch.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], dim=-1)


class PostProcess(nn.Module):
    def __init__(self, score_thresh=0.3, iou_thresh=0.5, max_det=10):
        super().__init__()
        self.score_thresh = score_thresh
        self.iou_thresh = iou_thresh
        self.max_det = max_det

    def nms(self, boxes, scores):
        order = scores.argsort(descending=True)
        keep = []
        while order.numel() > 0:
            i = order[0]
            keep.append(i)
            if len(keep) >= self.max_det:
                break
            ious = box_iou(boxes[i].unsqueeze(0), boxes[order[1:]]).squeeze(0)
            order = order[1:][ious <= self.iou_thresh]
        return torch.stack(keep) if keep else order

    def forward(self, anchors, deltas, logits):
        boxes = decode(anchors, deltas)
        scores = logits.sigmoid()
        keep = scores > self.score_thresh
        boxes, scores = boxes[keep], scores[keep]
        idx = self.nms(boxes, scores)
        return boxes[idx], scores[idx]


def drop_small(boxes, min_size):
    wh = boxes[:, 2:] - boxes[:, :2]
    ok = (wh >= min_size).all(dim=1)
    return boxes[ok]


def make_anchors(n):
    xy = torch.rand(n, 2) * 50
    wh = torch.rand(n, 2) * 10 + 2
    return torch.cat([xy, xy + wh], dim=1)


def main():
    torch.manual_seed(0)
    post = PostProcess()
    post.compile(backend="eager")
    for n in (30, 40):
        post(make_anchors(n), torch.randn(n, 4) * 0.1, torch.randn(n))

    small = torch.compile(drop_small, backend="eager")
    small(make_anchors(20), 4.0)
    small(make_anchors(20), 6.0)
