"""Mask refinement for an interactive segmentation tool: low-res logits -> full-res binary masks."""
from __future__ import annotations

from typing import List, Tuple

import torch
import torch._dynamo
import torch.nn.functional as F

torch._dynamo.config.automatic_dynamic_shapes = False
torch._dynamo.config.capture_scalar_outputs = True


@torch.compile
def refine_masks(low_res: torch.Tensor, image_hw: Tuple[int, int], pad_hw: Tuple[int, int],
                 mask_threshold: float = 0.0) -> Tuple[torch.Tensor, torch.Tensor, float]:
    masks = F.interpolate(low_res, size=pad_hw, mode="bilinear", align_corners=False)
    masks = masks[..., : image_hw[0], : image_hw[1]]
    probs = masks.sigmoid()
    binary = masks > mask_threshold
    stability = (probs > 0.6).sum(dim=(-1, -2)) / (probs > 0.4).sum(dim=(-1, -2)).clamp(min=1)
    best = stability.argmax(dim=1)
    score = stability.max().item()
    return binary.index_select(1, best).squeeze(1), stability, score


def letterbox_shape(h: int, w: int, target: int = 64) -> Tuple[int, int]:
    scale = target / max(h, w)
    return round(h * scale), round(w * scale)


def run_session(images: List[Tuple[int, int]]) -> None:
    for h, w in images:
        new_h, new_w = letterbox_shape(h, w)
        low_res = torch.randn(1, 3, 16, 16)
        mask, stab, score = refine_masks(low_res, (new_h, new_w), (64, 64))
        print((h, w), tuple(mask.shape), round(score, 3), [round(s, 3) for s in stab[0].tolist()])


def main() -> None:
    torch.manual_seed(0)
    run_session([(480, 640), (480, 640), (720, 1280), (1024, 768)])


if __name__ == "__main__":
    main()
