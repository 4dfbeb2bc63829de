"""Single-stage detector post-processing: anchor decoding, score filtering, class-wise NMS."""
from __future__ import annotations

from typing import Dict, List

import torch
import torch.nn as nn


def make_anchors(h: int, w: int, stride: int = 8, size: float = 16.0) -> torch.Tensor:
    ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
    cx = (xs.flatten().float() + 0.5) * stride
    cy = (ys.flatten().float() + 0.5) * stride
    half = torch.full_like(cx, size / 2)
    return torch.stack([cx - half, cy - half, cx + half, cy + half], dim=1)


class DetHead(nn.Module):
    def __init__(self, ch: int = 16, num_classes: int = 3) -> None:
        super().__init__()
        self.cls = nn.Conv2d(ch, num_classes, 3, padding=1)
        self.reg = nn.Conv2d(ch, 4, 3, padding=1)

    def forward(self, feat: torch.Tensor):
        b = feat.shape[0]
        scores = self.cls(feat).sigmoid().flatten(2).transpose(1, 2).reshape(b, -1, self.cls.out_channels)
        deltas = self.reg(feat).flatten(2).transpose(1, 2)
        return scores, deltas


@torch.compile
def decode_and_filter(anchors: torch.Tensor, deltas: torch.Tensor, scores: torch.Tensor,
                      score_thresh: float, max_candidates: int) -> Dict[str, torch.Tensor]:
    wh = anchors[:, 2:] - anchors[:, :2]
    ctr = anchors[:, :2] + 0.5 * wh
    ctr = ctr + deltas[:, :2] * wh
    wh = wh * deltas[:, 2:].clamp(max=4.0).exp()
    boxes = torch.cat([ctr - 0.5 * wh, ctr + 0.5 * wh], dim=1)
    best, labels = scores.max(dim=1)
    k = min(max_candidates, best.shape[0])
    top, idx = best.topk(k)
    keep = top > score_thresh
    return {"boxes": boxes[idx][keep], "scores": top[keep], "labels": labels[idx][keep]}


def nms(boxes: torch.Tensor, scores: torch.Tensor, iou_thresh: float = 0.5) -> List[int]:
    order = scores.argsort(descending=True).tolist()
    kept: List[int] = []
    while order:
        i = order.pop(0)
        kept.append(i)
        if not order:
            break
        rest = torch.tensor(order)
        lt = torch.maximum(boxes[i, :2], boxes[rest, :2])
        rb = torch.minimum(boxes[i, 2:], boxes[rest, 2:])
        inter = (rb - lt).clamp(min=0).prod(dim=1)
        area = lambda b: (b[..., 2:] - b[..., :2]).prod(-1)
        iou = inter / (area(boxes[i]) + area(boxes[rest]) - inter)
        order = [o for o, v in zip(order, iou.tolist()) if v <= iou_thresh]
    return kept


def detect(head: DetHead, feat: torch.Tensor, score_thresh: float = 0.6) -> Dict[str, torch.Tensor]:
    h, w = feat.shape[-2:]
    anchors = make_anchors(h, w)
    scores, deltas = head(feat)
    out = decode_and_filter(anchors, deltas[0], scores[0], score_thresh, 100)
    while out["scores"].numel() == 0 and score_thresh > 0.05:
        score_thresh = score_thresh / 2
        out = decode_and_filter(anchors, deltas[0], scores[0], score_thresh, 100)
    kept = nms(out["boxes"], out["scores"])
    return {k: v[kept] for k, v in out.items()}


def main() -> None:
    torch.manual_seed(0)
    head = DetHead().eval()
    with torch.no_grad():
        for h, w in [(8, 8), (8, 8), (6, 10), (12, 8)]:
            feat = torch.randn(1, 16, h, w)
            dets = detect(head, feat)
            print((h, w), dets["boxes"].shape[0])


if __name__ == "__main__":
    main()
