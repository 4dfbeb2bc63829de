"""A small conv net with a feature pyramid, plus helpers that crop by content."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int = 1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class TinyFPN(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = ConvBlock(3, 8)
        self.down1 = ConvBlock(8, 16, stride=2)
        self.down2 = ConvBlock(16, 16, stride=2)
        self.lateral = nn.Conv2d(16, 16, 1)
        self.head = nn.Linear(16, 4)

    def forward(self, images):
        if images.shape[1] == 1:  # ok
            images = images.expand(-1, 3, -1, -1)
        c1 = self.stem(images)
        c2 = self.down1(c1)
        c3 = self.down2(c2)
        p2 = self.lateral(c2) + F.interpolate(c3, size=c2.shape[-2:], mode="nearest")  # ok
        pooled = F.adaptive_avg_pool2d(p2, 1).flatten(1)
        if pooled.size(0) > 1 and self.training:  # ok
            pooled = pooled - pooled.mean(0, keepdim=True)
        return self.head(pooled)


class ContentCrop(nn.Module):
    """Crops away empty rows at the bottom: the crop height depends on the pixels."""

    def forward(self, images):
        rows = (images.abs().sum(dim=(0, 1, 3)) > 0)
        height = rows.long().sum()
        return images[:, :, :height]  # expect: DYN207


class PadToMultiple(nn.Module):
    def __init__(self, multiple: int = 4):
        super().__init__()
        self.multiple = multiple

    def forward(self, images):
        h, w = images.shape[-2:]
        pad_h = (self.multiple - h % self.multiple) % self.multiple  # ok
        pad_w = (self.multiple - w % self.multiple) % self.multiple
        return F.pad(images, (0, pad_w, 0, pad_h))


def __dynlint_calls__():
    torch.manual_seed(0)
    model = torch.compile(TinyFPN().eval())
    model(torch.randn(2, 3, 16, 16))
    images = torch.zeros(1, 3, 6, 5)
    images[:, :, :4] = 1.0
    torch.compile(ContentCrop())(images)
    torch.compile(PadToMultiple())(torch.randn(1, 3, 6, 5))
