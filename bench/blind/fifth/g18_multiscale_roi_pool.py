"""Multi-scale RoI pooling over FPN levels, in the style of torchvision's MultiScaleRoIAlign."""
import math
from typing import Dict, List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def roi_align(features: Tensor, rois: Tensor, output_size: int, spatial_scale: float) -> Tensor:
    """rois: [K, 5] with (batch_idx, x1, y1, x2, y2) in image coordinates."""
    if rois.numel() == 0:
        return features.new_zeros(0, features.shape[1], output_size, output_size)
    n, _, h, w = features.shape
    batch_idx = rois[:, 0].long()
    boxes = rois[:, 1:] * spatial_scale
    steps = (torch.arange(output_size, dtype=features.dtype) + 0.5) / output_size
    xs = boxes[:, 0:1] + steps[None] * (boxes[:, 2:3] - boxes[:, 0:1])
    ys = boxes[:, 1:2] + steps[None] * (boxes[:, 3:4] - boxes[:, 1:2])
    gx = xs / (w - 1) * 2 - 1
    gy = ys / (h - 1) * 2 - 1
    grid = torch.stack(torch.broadcast_tensors(gx[:, None, :], gy[:, :, None]), dim=-1)
    return F.grid_sample(features[batch_idx], grid, align_corners=True)


def convert_to_roi_format(boxes: List[Tensor]) -> Tensor:
    concat_boxes = torch.cat(boxes, dim=0)
    ids = torch.cat([torch.full_like(b[:, :1], i) for i, b in enumerate(boxes)], dim=0)
    return torch.cat([ids, concat_boxes], dim=1)


def infer_scale(feature: Tensor, original_size: List[int]) -> float:
    size = feature.shape[-2:]
    possible_scales = []
    for s1, s2 in zip(size, original_size):
        approx_scale = float(s1) / float(s2)
        possible_scales.append(2 ** float(torch.tensor(approx_scale).log2().round()))
    return possible_scales[0]


class LevelMapper:
    def __init__(self, k_min: int, k_max: int, canonical_scale: int = 224, canonical_level: int = 4, eps: float = 1e-6):
        self.k_min = k_min
        self.k_max = k_max
        self.s0 = canonical_scale
        self.lvl0 = canonical_level
        self.eps = eps

    def __call__(self, boxlists: List[Tensor]) -> Tensor:
        s = torch.sqrt(torch.cat([(b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]) for b in boxlists]))
        target_lvls = torch.floor(self.lvl0 + torch.log2(s / self.s0) + torch.tensor(self.eps, dtype=s.dtype))
        target_lvls = torch.clamp(target_lvls, min=self.k_min, max=self.k_max)
        return (target_lvls.to(torch.int64) - self.k_min).to(torch.int64)


class MultiScaleRoIPool(nn.Module):
    def __init__(self, featmap_names: List[str], output_size: int, canonical_scale: int = 224):
        super().__init__()
        self.featmap_names = featmap_names
        self.output_size = output_size
        self.canonical_scale = canonical_scale
        self.scales: Optional[List[float]] = None
        self.map_levels: Optional[LevelMapper] = None

    def setup_scales(self, features: List[Tensor], image_shapes: List[Tuple[int, int]]):
        max_x = max(s[0] for s in image_shapes)
        max_y = max(s[1] for s in image_shapes)
        original_input_shape = [max_x, max_y]
        scales = [infer_scale(f, original_input_shape) for f in features]
        lvl_min = -math.log2(scales[0])
        lvl_max = -math.log2(scales[-1])
        self.scales = scales
        self.map_levels = LevelMapper(int(lvl_min), int(lvl_max), canonical_scale=self.canonical_scale)

    def forward(self, x: Dict[str, Tensor], boxes: List[Tensor], image_shapes: List[Tuple[int, int]]) -> Tensor:
        x_filtered = [v for k, v in x.items() if k in self.featmap_names]
        if self.scales is None or self.map_levels is None:
            self.setup_scales(x_filtered, image_shapes)
        rois = convert_to_roi_format(boxes)
        if len(x_filtered) == 1:
            return roi_align(x_filtered[0], rois, self.output_size, self.scales[0])
        levels = self.map_levels(boxes)
        result = x_filtered[0].new_zeros(rois.shape[0], x_filtered[0].shape[1], self.output_size, self.output_size)
        for level, (per_level_feature, scale) in enumerate(zip(x_filtered, self.scales)):
            idx_in_level = torch.where(levels == level)[0]
            rois_per_level = rois[idx_in_level]
            result[idx_in_level] = roi_align(per_level_feature, rois_per_level, self.output_size, scale)
        return result


class BoxHead(nn.Module):
    def __init__(self, pooler, channels=4, num_classes=3):
        super().__init__()
        self.pooler = pooler
        self.fc = nn.Linear(channels * pooler.output_size ** 2, 32)
        self.cls = nn.Linear(32, num_classes)

    def forward(self, features, proposals, image_shapes):
        pooled = self.pooler(features, proposals, image_shapes)
        return self.cls(F.relu(self.fc(pooled.flatten(1))))


def random_boxes(n, h, w):
    xy = torch.rand(n, 2) * torch.tensor([w * 0.6, h * 0.6])
    wh = torch.rand(n, 2) * torch.tensor([w * 0.4, h * 0.4]) + 4
    return torch.cat([xy, xy + wh], dim=1)


def main():
    torch.manual_seed(0)
    pooler = MultiScaleRoIPool(["p2", "p3", "p4"], output_size=4, canonical_scale=32)
    head = torch.compile(BoxHead(pooler).eval())
    image_shapes = [(64, 64), (64, 48)]
    features = {"p2": torch.randn(2, 4, 16, 16), "p3": torch.randn(2, 4, 8, 8),
                "p4": torch.randn(2, 4, 4, 4), "pool": torch.randn(2, 4, 2, 2)}
    with torch.no_grad():
        for counts in ((5, 7), (3, 12)):
            proposals = [random_boxes(c, h, w) for c, (h, w) in zip(counts, image_shapes)]
            print(head(features, proposals, image_shapes).shape)


if __name__ == "__main__":
    main()
