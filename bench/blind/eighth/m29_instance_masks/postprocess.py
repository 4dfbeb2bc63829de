"""Paste fixed-resolution instance masks back into original image coordinates."""
from __future__ import annotations

from typing import Dict, Tuple

import torch
import torch.nn.functional as F


@torch.compile
def paste_masks(mask_logits: torch.Tensor, boxes: torch.Tensor, image_size: Tuple[int, int],
                threshold: float = 0.5) -> torch.Tensor:
    """mask_logits: (N, M, M); boxes: (N, 4) in pixels. Returns (N, H, W) bool."""
    h, w = image_size
    n = boxes.shape[0]
    ys = (torch.arange(h).float() + 0.5)[None, :, None]
    xs = (torch.arange(w).float() + 0.5)[None, None, :]
    x0, y0, x1, y1 = [b[:, None, None] for b in boxes.unbind(1)]
    gx = (xs - x0) / (x1 - x0).clamp(min=1) * 2 - 1
    gy = (ys - y0) / (y1 - y0).clamp(min=1) * 2 - 1
    grid = torch.stack([gx.expand(n, h, w), gy.expand(n, h, w)], dim=-1)
    probs = F.grid_sample(mask_logits[:, None].sigmoid(), grid, align_corners=False)[:, 0]
    return probs > threshold


def results_to_dict(masks: torch.Tensor, labels: torch.Tensor) -> Dict[int, torch.Tensor]:
    out: Dict[int, torch.Tensor] = {}
    for c in labels.unique().tolist():
        out[c] = masks[labels == c].any(dim=0)
    return out
