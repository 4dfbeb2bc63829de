"""Encoder-decoder segmenter with BatchNorm and dropout."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBNReLU(nn.Sequential):
    def __init__(self, cin: int, cout: int, stride: int = 1) -> None:
        super().__init__(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class MiniSeg(nn.Module):
    def __init__(self, n_cls: int = 4) -> None:
        super().__init__()
        self.enc1 = ConvBNReLU(3, 8)
        self.enc2 = ConvBNReLU(8, 16, stride=2)
        self.drop = nn.Dropout2d(0.1)
        self.dec = ConvBNReLU(24, 8)
        self.cls = nn.Conv2d(8, n_cls, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        f1 = self.enc1(x)
        f2 = self.drop(self.enc2(f1))
        up = F.interpolate(f2, size=f1.shape[-2:], mode="bilinear", align_corners=False)
        return self.cls(self.dec(torch.cat([f1, up], dim=1)))


def build_model(n_cls: int = 4) -> MiniSeg:
    model = MiniSeg(n_cls)
    model.compile()
    return model
