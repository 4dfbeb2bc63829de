"""Anchor generation for FPN feature maps, modelled on torchvision's AnchorGenerator."""
from typing import Dict, List, Tuple

import torch
from torch import Tensor, nn


class ImageList:
    def __init__(self, tensors: Tensor, image_sizes: List[Tuple[int, int]]):
        self.tensors = tensors
        self.image_sizes = image_sizes


class AnchorGenerator(nn.Module):
    def __init__(self, sizes=((16,), (32,), (64,)), aspect_ratios=((0.5, 1.0, 2.0),) * 3):
        super().__init__()
        self.sizes = sizes
        self.aspect_ratios = aspect_ratios
        self.cell_anchors = [self.generate_anchors(s, a) for s, a in zip(sizes, aspect_ratios)]
        self._cache: Dict[str, List[Tensor]] = {}

    @staticmethod
    def generate_anchors(scales, aspect_ratios, dtype=torch.float32):
        scales = torch.as_tensor(scales, dtype=dtype)
        aspect_ratios = torch.as_tensor(aspect_ratios, dtype=dtype)
        h_ratios = torch.sqrt(aspect_ratios)
        w_ratios = 1 / h_ratios
        ws = (w_ratios[:, None] * scales[None, :]).view(-1)
        hs = (h_ratios[:, None] * scales[None, :]).view(-1)
        return (torch.stack([-ws, -hs, ws, hs], dim=1) / 2).round()

    def num_anchors_per_location(self):
        return [len(s) * len(a) for s, a in zip(self.sizes, self.aspect_ratios)]

    def grid_anchors(self, grid_sizes: List[List[int]], strides: List[List[Tensor]]) -> List[Tensor]:
        anchors = []
        for size, stride, base_anchors in zip(grid_sizes, strides, self.cell_anchors):
            grid_height, grid_width = size
            stride_height, stride_width = stride
            shifts_x = torch.arange(0, grid_width, dtype=torch.int32) * stride_width
            shifts_y = torch.arange(0, grid_height, dtype=torch.int32) * stride_height
            shift_y, shift_x = torch.meshgrid(shifts_y, shifts_x, indexing="ij")
            shift_x, shift_y = shift_x.reshape(-1), shift_y.reshape(-1)
            shifts = torch.stack((shift_x, shift_y, shift_x, shift_y), dim=1)
            anchors.append((shifts.view(-1, 1, 4) + base_anchors.view(1, -1, 4)).reshape(-1, 4))
        return anchors

    def cached_grid_anchors(self, grid_sizes, strides):
        key = str(grid_sizes) + str(strides)
        if key in self._cache:
            return self._cache[key]
        anchors = self.grid_anchors(grid_sizes, strides)
        self._cache[key] = anchors
        return anchors

    def forward(self, image_list: ImageList, feature_maps: List[Tensor]) -> List[Tensor]:
        grid_sizes = [list(fm.shape[-2:]) for fm in feature_maps]
        image_size = image_list.tensors.shape[-2:]
        strides = [[torch.tensor(image_size[0] // g[0], dtype=torch.int64),
                    torch.tensor(image_size[1] // g[1], dtype=torch.int64)] for g in grid_sizes]
        anchors_over_all_feature_maps = self.cached_grid_anchors(grid_sizes, strides)
        anchors = []
        for _ in range(len(image_list.image_sizes)):
            anchors.append(torch.cat(anchors_over_all_feature_maps))
        return anchors
