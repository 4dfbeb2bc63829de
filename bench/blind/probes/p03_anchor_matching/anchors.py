"""Anchor generation and IoU helpers (RetinaNet / Faster R-CNN style)."""
import functools
import math
from dataclasses import dataclass, field

import torch


@dataclass
class AnchorConfig:
    sizes: tuple = (32, 64)
    aspect_ratios: tuple = (0.5, 1.0, 2.0)
    strides: tuple = (8, 16)
    fg_iou: float = 0.5
    bg_iou: float = 0.4
    batch_per_image: int = 32
    positive_fraction: float = 0.25
    allow_low_quality: bool = True
    extra: dict = field(default_factory=dict)


@functools.lru_cache(maxsize=None)
def cell_anchors(size, ratios):
    ratios = torch.tensor(ratios)
    h = size * torch.sqrt(ratios)
    w = size / torch.sqrt(ratios)
    return torch.stack([-w, -h, w, h], dim=1) / 2


def grid_anchors(feature_shapes, cfg):
    all_anchors = []
    for (fh, fw), size, stride in zip(feature_shapes, cfg.sizes, cfg.strides):
        base = cell_anchors(size, cfg.aspect_ratios)
        sx = torch.arange(fw, dtype=torch.float32) * stride
        sy = torch.arange(fh, dtype=torch.float32) * stride
        yy, xx = torch.meshgrid(sy, sx, indexing="ij")
        shifts = torch.stack([xx.reshape(-1), yy.reshape(-1)] * 2, dim=1)
        all_anchors.append((shifts[:, None, :] + base[None]).reshape(-1, 4))
    return torch.cat(all_anchors)


def pairwise_iou(boxes1, boxes2):
    area1 = (boxes1[:, 2] - boxes1[:, 0]).clamp(min=0) * (boxes1[:, 3] - boxes1[:, 1]).clamp(min=0)
    area2 = (boxes2[:, 2] - boxes2[:, 0]).clamp(min=0) * (boxes2[:, 3] - boxes2[:, 1]).clamp(min=0)
    lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])
    rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    return inter / (area1[:, None] + area2 - inter + 1e-6)


def subsample_labels(labels, num_samples, positive_fraction, bg_label=0):
    positive = ((labels != -1) & (labels != bg_label)).nonzero().squeeze(1)
    negative = (labels == bg_label).nonzero().squeeze(1)
    num_pos = int(num_samples * positive_fraction)
    num_pos = min(positive.numel(), num_pos)
    num_neg = min(negative.numel(), num_samples - num_pos)
    perm1 = torch.randperm(positive.numel())[:num_pos]
    perm2 = torch.randperm(negative.numel())[:num_neg]
    return positive[perm1], negative[perm2]
