"""Semantic segmentation inference: resize logits per image, threshold and summarise classes."""
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class SegConfig:
    num_classes: int = 5
    ignore_index: int = 255
    confidence_threshold: float = 0.0
    class_names: List[str] = field(default_factory=lambda: ["bg", "road", "car", "person", "sky"])


class TinySegHead(nn.Module):
    def __init__(self, cfg: SegConfig, width=16):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(3, width, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(width, width, 3, stride=2, padding=1), nn.ReLU(),
        )
        self.classifier = nn.Conv2d(width, cfg.num_classes, 1)

    def forward(self, images):
        return self.classifier(self.encoder(images))


class SemanticPostProcessor:
    def __init__(self, cfg: SegConfig):
        self.cfg = cfg

    def __call__(self, logits: torch.Tensor, padded_size: Tuple[int, int],
                 image_sizes: List[Tuple[int, int]], original_sizes: Optional[List[Tuple[int, int]]] = None):
        logits = F.interpolate(logits, size=padded_size, mode="bilinear", align_corners=False)
        outputs = []
        for i, (h, w) in enumerate(image_sizes):
            per_image = logits[i, :, :h, :w]
            if original_sizes is not None:
                oh, ow = original_sizes[i]
                per_image = F.interpolate(per_image[None], size=(oh, ow), mode="bilinear", align_corners=False)[0]
            probs = per_image.softmax(dim=0)
            conf, labels = probs.max(dim=0)
            if self.cfg.confidence_threshold > 0:
                labels = torch.where(conf >= self.cfg.confidence_threshold, labels,
                                     torch.full_like(labels, self.cfg.ignore_index))
            outputs.append(labels)
        return outputs


def class_areas(label_maps, cfg: SegConfig):
    summary = []
    for labels in label_maps:
        valid = labels[labels != cfg.ignore_index]
        counts = torch.bincount(valid.flatten(), minlength=cfg.num_classes).cpu().numpy()
        frac = counts / max(labels.numel(), 1)
        summary.append({cfg.class_names[c]: round(float(frac[c]), 3) for c in np.nonzero(counts)[0]})
    return summary


def pad_batch(images, divisor=8):
    h = max(im.shape[1] for im in images)
    w = max(im.shape[2] for im in images)
    h, w = -(-h // divisor) * divisor, -(-w // divisor) * divisor
    out = images[0].new_zeros(len(images), 3, h, w)
    for im, dst in zip(images, out):
        dst[:, : im.shape[1], : im.shape[2]] = im
    return out, [tuple(im.shape[1:]) for im in images]


def main():
    torch.manual_seed(0)
    cfg = SegConfig()
    model = TinySegHead(cfg).eval()
    model = torch.compile(model)
    post = torch.compile(SemanticPostProcessor(cfg))

    batches = [
        ([torch.rand(3, 30, 40), torch.rand(3, 32, 24)], None),
        ([torch.rand(3, 48, 36)], [(96, 72)]),
    ]
    with torch.inference_mode():
        for images, original_sizes in batches:
            padded, sizes = pad_batch(images)
            logits = model(padded)
            label_maps = post(logits, tuple(padded.shape[-2:]), sizes, original_sizes)
            print(class_areas(label_maps, cfg))
            cfg.confidence_threshold = 0.22


if __name__ == "__main__":
    main()
