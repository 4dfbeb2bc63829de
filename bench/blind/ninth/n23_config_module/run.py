import random

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import config as cfg
from .losses import segmentation_loss


class TinySegNet(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.enc1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.enc2 = nn.Sequential(nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.head = nn.Conv2d(16, num_classes, 1)
        self.aux_head = nn.Conv2d(8, num_classes, 1)

    def forward(self, x):
        f1 = self.enc1(x)
        f2 = self.enc2(f1)
        out = F.interpolate(self.head(f2), size=x.shape[-2:], mode="bilinear", align_corners=False)
        return out, self.aux_head(f1)


def main():
    torch.manual_seed(0)
    random.seed(0)
    model = TinySegNet(cfg.NUM_CLASSES)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    epochs = 4
    for epoch in range(epochs):
        # poly decay of the auxiliary weight; dice term switched on for the last epochs
        cfg.AUX_LOSS_WEIGHT = 0.4 * (1 - epoch / epochs) ** 0.9
        cfg.USE_DICE = epoch >= 2
        for it in range(2):
            x = torch.randn(2, 3, 16, 16)
            y = torch.randint(0, cfg.NUM_CLASSES, (2, 16, 16))
            y[:, :2] = cfg.IGNORE_INDEX
            main_out, aux_out = model(x)
            loss = segmentation_loss(main_out, aux_out, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return loss.item()
