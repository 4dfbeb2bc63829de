"""Detection head decoding + class-agnostic NMS, the way small detectors ship it."""
from dataclasses import dataclass

import torch


@dataclass
class PostCfg:
    score_thresh: float = 0.05
    iou_thresh: float = 0.5
    max_det: int = 20


def box_iou(a, b):
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    lt = torch.max(a[:, None, :2], b[None, :, :2])
    rb = torch.min(a[:, None, 2:], b[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter / (area_a[:, None] + area_b[None] - inter)


def decode(deltas, anchors):
    wa = anchors[:, 2] - anchors[:, 0]
    ha = anchors[:, 3] - anchors[:, 1]
    cx = anchors[:, 0] + 0.5 * wa + deltas[:, 0] * wa
    cy = anchors[:, 1] + 0.5 * ha + deltas[:, 1] * ha
    w = wa * torch.exp(deltas[:, 2].clamp(max=4.0))
    h = ha * torch.exp(deltas[:, 3].clamp(max=4.0))
    return torch.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], dim=1)


def nms(boxes, scores, iou_thresh):
    order = scores.argsort(descending=True)
    keep = []
    while order.numel() > 0:
        i = order[0]
        keep.append(i)
        if order.numel() == 1:
            break
        ious = box_iou(boxes[i][None], boxes[order[1:]])[0]
        order = order[1:][ious <= iou_thresh]
    return torch.stack(keep) if keep else boxes.new_zeros((0,), dtype=torch.long)


def postprocess(cls_logits, box_deltas, anchors, score_thresh, iou_thresh, max_det):
    scores, labels = cls_logits.sigmoid().max(dim=1)
    boxes = decode(box_deltas, anchors)
    mask = scores > score_thresh
    boxes, scores, labels = boxes[mask], scores[mask], labels[mask]
    keep = nms(boxes, scores, iou_thresh)[:max_det]
    return boxes[keep], scores[keep], labels[keep]


def make_anchors(n, seed):
    g = torch.Generator().manual_seed(seed)
    xy = torch.rand(n, 2, generator=g) * 64
    wh = torch.rand(n, 2, generator=g) * 16 + 4
    return torch.cat([xy, xy + wh], dim=1)


def main():
    cfg = PostCfg()
    post = torch.compile(postprocess)
    results = []
    for img_id, n_anchors in enumerate([30, 30, 45]):
        g = torch.Generator().manual_seed(img_id)
        anchors = make_anchors(n_anchors, img_id)
        cls_logits = torch.randn(n_anchors, 5, generator=g)
        deltas = torch.randn(n_anchors, 4, generator=g) * 0.1
        thresh = cfg.score_thresh if img_id < 2 else 0.3
        results.append(post(cls_logits, deltas, anchors, thresh, cfg.iou_thresh, cfg.max_det))
    print([r[0].shape for r in results])


if __name__ == "__main__":
    main()
