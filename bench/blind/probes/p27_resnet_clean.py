"""ResNet-style backbone with a configurable norm layer (functools.partial), super() chains. Clean code."""
import functools
from typing import Callable, Optional

import torch
import torch.nn as nn


class ConvNormAct(nn.Sequential):
    def __init__(self, cin, cout, k=3, stride=1, norm_layer: Callable = nn.BatchNorm2d, act: Optional[Callable] = nn.ReLU):
        layers = [nn.Conv2d(cin, cout, k, stride, k // 2, bias=False), norm_layer(cout)]
        if act is not None:
            layers.append(act(inplace=True))
        super().__init__(*layers)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, cin, cout, stride=1, norm_layer=nn.BatchNorm2d):
        super().__init__()
        self.conv1 = ConvNormAct(cin, cout, stride=stride, norm_layer=norm_layer)
        self.conv2 = ConvNormAct(cout, cout, norm_layer=norm_layer, act=None)
        self.shortcut = nn.Identity()
        if stride != 1 or cin != cout:
            self.shortcut = ConvNormAct(cin, cout, k=1, stride=stride, norm_layer=norm_layer, act=None)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.act(self.conv2(self.conv1(x)) + self.shortcut(x))


class SEBlock(BasicBlock):
    def __init__(self, cin, cout, stride=1, norm_layer=nn.BatchNorm2d, reduction=4):
        super().__init__(cin, cout, stride, norm_layer)
        self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(cout, cout // reduction, 1), nn.ReLU(),
                                nn.Conv2d(cout // reduction, cout, 1), nn.Sigmoid())

    def forward(self, x):
        out = self.conv2(self.conv1(x))
        out = out * self.se(out)
        return self.act(out + self.shortcut(x))


class ResNet(nn.Module):
    def __init__(self, widths=(8, 16, 32), num_classes=10, block=SEBlock, groups=None):
        super().__init__()
        norm = functools.partial(nn.GroupNorm, groups) if groups else nn.BatchNorm2d
        if groups:
            norm = lambda c, _n=norm: _n(c)  # noqa: E731
        self.stem = ConvNormAct(3, widths[0], norm_layer=norm)
        stages, cin = [], widths[0]
        for i, w in enumerate(widths):
            stages.append(nn.Sequential(block(cin, w, stride=1 if i == 0 else 2, norm_layer=norm),
                                        block(w, w, norm_layer=norm)))
            cin = w
        self.stages = nn.Sequential(*stages)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, num_classes)

    def forward_features(self, x):
        return self.stages(self.stem(x))

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.forward_features(x)), 1))


def main():
    torch.manual_seed(0)
    model = ResNet(groups=4).eval()
    model = torch.compile(model)
    x = torch.randn(2, 3, 16, 16)
    with torch.inference_mode():
        a = model(x)
        b = model(x * 0.5)
    return (a - b).abs().max().item()


if __name__ == "__main__":
    print(main())
