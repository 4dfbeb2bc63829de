import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = None
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.short is None else self.short(x)
        return F.relu(out + identity)


class TinyResNet(nn.Module):
    def __init__(self, num_classes=10, width=8, drop=0.1):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, 1, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
        self.layer1 = BasicBlock(width, width)
        self.layer2 = BasicBlock(width, 2 * width, stride=2)
        self.drop = nn.Dropout(drop)
        self.fc = nn.Linear(2 * width, num_classes)

    def forward(self, x, return_features=False):
        x = self.stem(x)
        x = self.layer2(self.layer1(x))
        feats = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        logits = self.fc(self.drop(feats))
        if return_features:
            return logits, feats
        return logits


def build_model(cfg):
    model = TinyResNet(num_classes=cfg.num_classes, width=cfg.width, drop=cfg.dropout)
    return torch.compile(model)
