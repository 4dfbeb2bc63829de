import math
from typing import Dict, List, Optional, Tuple, Union

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


def _convert_to_roi_format(boxes: List[Tensor]) -> Tensor:
    concat_boxes = torch.cat(boxes, dim=0)
    device, dtype = concat_boxes.device, concat_boxes.dtype
    ids = torch.cat(
        [torch.full_like(b[:, :1], i, dtype=dtype, layout=torch.strided, device=device) for i, b in enumerate(boxes)],
        dim=0,
    )
    return torch.cat([ids, concat_boxes], dim=1)


def roi_align(input: Tensor, rois: Tensor, output_size: Tuple[int, int], spatial_scale: float = 1.0,
              sampling_ratio: int = 2, aligned: bool = True) -> Tensor:
    n, c, h, w = input.shape
    ph, pw = output_size
    offset = 0.5 if aligned else 0.0
    batch_idx = rois[:, 0].long()
    x1 = rois[:, 1] * spatial_scale - offset
    y1 = rois[:, 2] * spatial_scale - offset
    x2 = rois[:, 3] * spatial_scale - offset
    y2 = rois[:, 4] * spatial_scale - offset
    steps_y = (torch.arange(ph * sampling_ratio, dtype=input.dtype) + 0.5) / (ph * sampling_ratio)
    steps_x = (torch.arange(pw * sampling_ratio, dtype=input.dtype) + 0.5) / (pw * sampling_ratio)
    ys = y1[:, None] + (y2 - y1)[:, None] * steps_y[None]
    xs = x1[:, None] + (x2 - x1)[:, None] * steps_x[None]
    gy = (ys + 0.5) / h * 2 - 1
    gx = (xs + 0.5) / w * 2 - 1
    grid = torch.stack(torch.broadcast_tensors(gx[:, None, :], gy[:, :, None]), dim=-1)
    sampled = F.grid_sample(input[batch_idx], grid, mode="bilinear", align_corners=False)
    return F.avg_pool2d(sampled, sampling_ratio)


def initLevelMapper(k_min: int, k_max: int, canonical_scale: int = 224, canonical_level: int = 4, eps: float = 1e-6):
    return LevelMapper(k_min, k_max, canonical_scale, canonical_level, eps)


class LevelMapper:
    def __init__(self, k_min: int, k_max: int, canonical_scale: int = 224, canonical_level: int = 4, eps: float = 1e-6):
        self.k_min = k_min
        self.k_max = k_max
        self.s0 = canonical_scale
        self.lvl0 = canonical_level
        self.eps = eps

    def __call__(self, boxlists: List[Tensor]) -> Tensor:
        s = torch.sqrt(torch.cat([box_area(boxlist) for boxlist in boxlists]))
        target_lvls = torch.floor(self.lvl0 + torch.log2(s / self.s0) + torch.tensor(self.eps, dtype=s.dtype))
        target_lvls = torch.clamp(target_lvls, min=self.k_min, max=self.k_max)
        return (target_lvls.to(torch.int64) - self.k_min).to(torch.int64)


def box_area(boxes: Tensor) -> Tensor:
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def _infer_scale(feature: Tensor, original_size: List[int]) -> float:
    size = feature.shape[-2:]
    possible_scales: List[float] = []
    for s1, s2 in zip(size, original_size):
        approx_scale = float(s1) / float(s2)
        scale = 2 ** float(torch.tensor(approx_scale).log2().round())
        possible_scales.append(scale)
    return possible_scales[0]


def _setup_scales(features: List[Tensor], image_shapes: List[Tuple[int, int]], canonical_scale: int, canonical_level: int):
    if not image_shapes:
        raise ValueError("images list should not be empty")
    max_x = 0
    max_y = 0
    for shape in image_shapes:
        max_x = max(shape[0], max_x)
        max_y = max(shape[1], max_y)
    original_input_shape = (max_x, max_y)

    scales = [_infer_scale(feat, original_input_shape) for feat in features]
    lvl_min = -torch.log2(torch.tensor(scales[0], dtype=torch.float32)).item()
    lvl_max = -torch.log2(torch.tensor(scales[-1], dtype=torch.float32)).item()
    map_levels = initLevelMapper(int(lvl_min), int(lvl_max), canonical_scale=canonical_scale, canonical_level=canonical_level)
    return scales, map_levels


def _filter_input(x: Dict[str, Tensor], featmap_names: List[str]) -> List[Tensor]:
    x_filtered = []
    for k, v in x.items():
        if k in featmap_names:
            x_filtered.append(v)
    return x_filtered


def _multiscale_roi_align(x_filtered, boxes, output_size, sampling_ratio, scales, mapper):
    num_levels = len(x_filtered)
    rois = _convert_to_roi_format(boxes)
    if num_levels == 1:
        return roi_align(x_filtered[0], rois, output_size=output_size, spatial_scale=scales[0], sampling_ratio=sampling_ratio)

    levels = mapper(boxes)
    num_rois = len(rois)
    num_channels = x_filtered[0].shape[1]
    dtype, device = x_filtered[0].dtype, x_filtered[0].device
    result = torch.zeros((num_rois, num_channels) + output_size, dtype=dtype, device=device)

    for level, (per_level_feature, scale) in enumerate(zip(x_filtered, scales)):
        idx_in_level = torch.where(levels == level)[0]
        rois_per_level = rois[idx_in_level]
        result_idx_in_level = roi_align(per_level_feature, rois_per_level, output_size=output_size,
                                        spatial_scale=scale, sampling_ratio=sampling_ratio)
        result[idx_in_level] = result_idx_in_level.to(result.dtype)
    return result


class MultiScaleRoIAlign(nn.Module):
    def __init__(self, featmap_names: List[str], output_size: Union[int, Tuple[int]], sampling_ratio: int,
                 *, canonical_scale: int = 224, canonical_level: int = 4):
        super().__init__()
        if isinstance(output_size, int):
            output_size = (output_size, output_size)
        self.featmap_names = featmap_names
        self.sampling_ratio = sampling_ratio
        self.output_size = tuple(output_size)
        self.scales = None
        self.map_levels = None
        self.canonical_scale = canonical_scale
        self.canonical_level = canonical_level

    @torch.compile
    def forward(self, x: Dict[str, Tensor], boxes: List[Tensor], image_shapes: List[Tuple[int, int]]) -> Tensor:
        x_filtered = _filter_input(x, self.featmap_names)
        if self.scales is None or self.map_levels is None:
            self.scales, self.map_levels = _setup_scales(x_filtered, image_shapes, self.canonical_scale, self.canonical_level)
        return _multiscale_roi_align(x_filtered, boxes, self.output_size, self.sampling_ratio, self.scales, self.map_levels)


def main():
    torch.manual_seed(0)
    pooler = MultiScaleRoIAlign(["feat1", "feat2", "feat3"], output_size=4, sampling_ratio=2, canonical_scale=32)
    image_shapes = [(128, 128), (128, 128)]
    for n in (6, 6, 6):
        feats = {"feat1": torch.randn(2, 8, 32, 32), "feat2": torch.randn(2, 8, 16, 16),
                 "feat3": torch.randn(2, 8, 8, 8), "pool": torch.randn(2, 8, 4, 4)}
        boxes = []
        for _ in range(2):
            xy = torch.rand(n, 2) * 80
            wh = torch.rand(n, 2) * 40 + 4
            boxes.append(torch.cat([xy, xy + wh], dim=1))
        out = pooler(feats, boxes, image_shapes)
    return out


if __name__ == "__main__":
    main()
