"""Feature-pyramid fusion for a backbone whose number of usable levels depends on input resolution."""
from __future__ import annotations

from typing import List

import torch
import torch.nn as nn
import torch.nn.functional as F


class Backbone(nn.Module):
    def __init__(self, ch: int = 8, max_levels: int = 5) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, ch, 3, 1, 1)
        self.downs = nn.ModuleList([nn.Conv2d(ch, ch, 3, 2, 1) for _ in range(max_levels - 1)])

    def forward(self, x: torch.Tensor, min_size: int = 4) -> List[torch.Tensor]:
        feats = [F.relu(self.stem(x))]
        for down in self.downs:
            if min(feats[-1].shape[-2:]) // 2 < min_size:
                break
            feats.append(F.relu(down(feats[-1])))
        return feats


class FPNFuse(nn.Module):
    def __init__(self, ch: int = 8, max_levels: int = 5) -> None:
        super().__init__()
        self.lateral = nn.ModuleList([nn.Conv2d(ch, ch, 1) for _ in range(max_levels)])
        self.out = nn.Conv2d(ch, 1, 3, 1, 1)

    def forward(self, feats: List[torch.Tensor]) -> torch.Tensor:
        top = self.lateral[len(feats) - 1](feats[-1])
        for i in range(len(feats) - 2, -1, -1):
            top = F.interpolate(top, size=feats[i].shape[-2:], mode="nearest") + self.lateral[i](feats[i])
        return self.out(top)


def main() -> None:
    torch.manual_seed(0)
    backbone = Backbone().eval()
    fuse = torch.compile(FPNFuse().eval())
    resolutions = [(32, 32), (32, 32), (16, 24), (64, 48), (32, 32)]
    with torch.no_grad():
        for h, w in resolutions:
            feats = backbone(torch.randn(1, 3, h, w))
            heat = fuse(feats)
            print((h, w), len(feats), tuple(heat.shape))


if __name__ == "__main__":
    main()
