"""Batched tensor transforms; one compiled entry point applies a named op."""
from __future__ import annotations

from typing import Tuple

import torch
import torch.nn.functional as F


def _cutout(x: torch.Tensor, size: int) -> torch.Tensor:
    b, _, h, w = x.shape
    cy = torch.randint(0, h, (b, 1, 1))
    cx = torch.randint(0, w, (b, 1, 1))
    ys = torch.arange(h).view(1, h, 1)
    xs = torch.arange(w).view(1, 1, w)
    mask = ((ys - cy).abs() <= size // 2) & ((xs - cx).abs() <= size // 2)
    return x.masked_fill(mask[:, None], 0.0)


@torch.compile
def apply_op(images: torch.Tensor, op: str, magnitude: float, out_size: Tuple[int, int]) -> torch.Tensor:
    if op == "hflip":
        images = images.flip(-1)
    elif op == "brightness":
        images = (images * (1.0 + magnitude)).clamp(0, 1)
    elif op == "contrast":
        mean = images.mean(dim=(1, 2, 3), keepdim=True)
        images = ((images - mean) * (1.0 + magnitude) + mean).clamp(0, 1)
    elif op == "cutout":
        images = _cutout(images, int(magnitude * images.shape[-1]))
    if images.shape[-2:] != out_size:
        images = F.interpolate(images, size=out_size, mode="bilinear", align_corners=False)
    return images
