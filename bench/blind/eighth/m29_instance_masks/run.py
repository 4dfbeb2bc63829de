"""Evaluate pasted masks on a handful of images of different sizes and detection counts."""
from __future__ import annotations

import torch

from .postprocess import paste_masks, results_to_dict

IMAGES = [((24, 32), 3), ((24, 32), 5), ((40, 30), 2), ((24, 32), 3)]


def random_boxes(n: int, h: int, w: int) -> torch.Tensor:
    xy = torch.rand(n, 2) * torch.tensor([w * 0.6, h * 0.6])
    wh = torch.rand(n, 2) * torch.tensor([w * 0.4, h * 0.4]) + 4
    return torch.cat([xy, xy + wh], dim=1)


def mask_iou(a: torch.Tensor, b: torch.Tensor) -> float:
    inter = (a & b).sum().item()
    union = (a | b).sum().item()
    return inter / max(union, 1)


def main() -> None:
    torch.manual_seed(0)
    for (h, w), n in IMAGES:
        logits = torch.randn(n, 14, 14)
        boxes = random_boxes(n, h, w)
        labels = torch.randint(0, 3, (n,))
        masks = paste_masks(logits, boxes, (h, w))
        gt = paste_masks(logits + 0.3 * torch.randn_like(logits), boxes, (h, w), threshold=0.4)
        pred_by_cls, gt_by_cls = results_to_dict(masks, labels), results_to_dict(gt, labels)
        ious = {c: round(mask_iou(pred_by_cls[c], gt_by_cls[c]), 3) for c in pred_by_cls}
        print((h, w), n, ious)


if __name__ == "__main__":
    main()
