import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvEncoder(nn.Module):
    def __init__(self, dim=32, width=16):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(3, width, 3, 2, 1), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, 2 * width, 3, 2, 1), nn.BatchNorm2d(2 * width), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.proj = nn.Sequential(nn.Linear(2 * width, 64), nn.ReLU(), nn.Linear(64, dim))

    def forward(self, x):
        return F.normalize(self.proj(self.conv(x)), dim=1)


def augment(x, gen):
    # random crop-and-resize + horizontal flip + brightness jitter, batched
    B, C, H, W = x.shape
    pad = F.pad(x, (2, 2, 2, 2), mode="reflect")
    dy, dx = (int(v) for v in torch.randint(0, 5, (2,), generator=gen))
    x = pad[..., dy:dy + H, dx:dx + W]
    flip = torch.rand(B, 1, 1, 1, generator=gen) < 0.5
    x = torch.where(flip, x.flip(-1), x)
    return x * (1 + 0.2 * (torch.rand(B, 1, 1, 1, generator=gen) - 0.5))
