"""Image classification backbone with input checks, optional downsampling and a configurable head."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

USE_SE = True
HEAD_DROPOUT = 0.0


class SqueezeExcite(nn.Module):
    def __init__(self, ch, r=4):
        super().__init__()
        self.fc1 = nn.Conv2d(ch, max(1, ch // r), 1)
        self.fc2 = nn.Conv2d(max(1, ch // r), ch, 1)

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * torch.sigmoid(self.fc2(F.relu(self.fc1(s))))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.se = SqueezeExcite(cout) if USE_SE else None
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.se is not None:
            out = self.se(out)
        if self.downsample is not None:
            identity = self.downsample(x)
        return F.relu(out + identity)


class ResNetTiny(nn.Module):
    def __init__(self, widths=(8, 16, 32), n_classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, widths[0], 3, 1, 1)
        blocks = []
        cin = widths[0]
        for i, w in enumerate(widths):
            blocks.append(BasicBlock(cin, w, stride=1 if i == 0 else 2))
            cin = w
        self.blocks = nn.ModuleList(blocks)
        self.fc = nn.Linear(cin, n_classes)
        self.n_stages = len(self.blocks)

    def forward(self, x):
        if x.dim() == 3:
            x = x.unsqueeze(0)
        assert x.shape[1] == 3, "expected RGB input"
        assert x.shape[-1] % (2 ** (self.n_stages - 1)) == 0
        x = self.stem(x)
        for i in range(self.n_stages):
            x = self.blocks[i](x)
        feat = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        if self.training and HEAD_DROPOUT > 0:
            feat = F.dropout(feat, HEAD_DROPOUT)
        logits = self.fc(feat) / math.sqrt(feat.shape[-1])
        half = logits.shape[0] // 2
        if isinstance(logits, torch.Tensor) and half > 0:
            logits = torch.cat([logits[:half], logits[half:]], dim=0)
        return logits


def main():
    torch.manual_seed(0)
    model = ResNetTiny().eval()
    model.compile(backend="eager")
    with torch.no_grad():
        model(torch.randn(4, 3, 16, 16))
        model(torch.randn(4, 3, 16, 16))
