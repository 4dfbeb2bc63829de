"""On-device batch augmentation module (flip, random resized crop, mixup) run inside the compiled model."""
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class GPUAugment(nn.Module):
    def __init__(self, flip_p=0.5, mixup_alpha=0.2, crop_scale=(0.6, 1.0), out_size=8):
        super().__init__()
        self.flip_p = flip_p
        self.mixup_alpha = mixup_alpha
        self.crop_scale = crop_scale
        self.out_size = out_size

    def random_resized_crop(self, x):
        h, w = x.shape[-2:]
        scale = random.uniform(*self.crop_scale)
        ch, cw = int(h * scale ** 0.5), int(w * scale ** 0.5)
        top = random.randint(0, h - ch)
        left = random.randint(0, w - cw)
        x = x[..., top:top + ch, left:left + cw]
        return F.interpolate(x, size=(self.out_size, self.out_size), mode="bilinear", align_corners=False)

    def forward(self, x, y):
        if not self.training:
            return x, F.one_hot(y, 4).float()
        if torch.rand(1) < self.flip_p:
            x = x.flip(-1)
        x = self.random_resized_crop(x)
        y = F.one_hot(y, 4).float()
        if self.mixup_alpha > 0:
            lam = float(np.random.beta(self.mixup_alpha, self.mixup_alpha))
            perm = torch.randperm(x.size(0))
            x = lam * x + (1 - lam) * x[perm]
            y = lam * y + (1 - lam) * y[perm]
        return x, y


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.augment = GPUAugment()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.GELU(), nn.AdaptiveAvgPool2d(2), nn.Flatten(),
                                      nn.Linear(32, 4))

    def forward(self, x, y):
        x, y = self.augment(x, y)
        logits = self.backbone(x)
        return torch.sum(-y * F.log_softmax(logits, -1), -1).mean()


def main():
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    model = Classifier()
    model.compile()
    for _ in range(3):
        loss = model(torch.randn(4, 3, 12, 12), torch.randint(0, 4, (4,)))
        loss.backward()
    model.eval()
    with torch.no_grad():
        loss = model(torch.randn(4, 3, 8, 8), torch.randint(0, 4, (4,)))
    return loss.item()


if __name__ == "__main__":
    print(main())
