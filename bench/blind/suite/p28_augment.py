"""Image augmentation applied on batches inside the compiled step: random crops, flips, mixup, op choice."""
import random

import numpy as np
import torch
import torch.nn.functional as F


class RandomResizedCrop:
    def __init__(self, size, scale=(0.5, 1.0)):
        self.size = size
        self.scale = scale

    def __call__(self, img):
        h, w = img.shape[-2:]
        s = random.uniform(*self.scale)
        ch, cw = max(1, int(h * s)), max(1, int(w * s))
        top = random.randint(0, h - ch)
        left = random.randint(0, w - cw)
        crop = img[..., top : top + ch, left : left + cw]
        return F.interpolate(crop, size=(self.size, self.size), mode="bilinear", align_corners=False)


class RandomFlip:
    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, img):
        if torch.rand(1) < self.p:
            return img.flip(-1)
        return img


def mixup(x, y, alpha=0.4):
    lam = np.random.beta(alpha, alpha)
    perm = torch.randperm(x.shape[0])
    return lam * x + (1 - lam) * x[perm], lam * y + (1 - lam) * y[perm]


class RandAugment:
    def __init__(self):
        self.ops = [lambda t: t.flip(-1), lambda t: t.transpose(-1, -2), lambda t: t * 1.2, lambda t: t.roll(2, -1)]

    def __call__(self, img, n_ops):
        for op in random.sample(self.ops, n_ops):
            img = op(img)
        return img


def normalize(img, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225)):
    m = torch.tensor(mean).view(1, -1, 1, 1)
    s = torch.tensor(std).view(1, -1, 1, 1)
    if img.dtype == torch.uint8:
        img = img.float() / 255.0
    return (img - m) / s


def main():
    np.random.seed(0)
    random.seed(0)
    torch.manual_seed(0)
    crop = torch.compile(RandomResizedCrop(8).__call__, backend="eager")
    crop(torch.randn(2, 3, 16, 16))
    crop(torch.randn(2, 3, 16, 16))

    flip = torch.compile(RandomFlip().__call__, backend="eager")
    flip(torch.randn(2, 3, 8, 8))
    flip(torch.randn(2, 3, 8, 8))

    mx = torch.compile(mixup, backend="eager")
    mx(torch.randn(4, 3, 8, 8), F.one_hot(torch.arange(4) % 3, 3).float())
    mx(torch.randn(4, 3, 8, 8), F.one_hot(torch.arange(4) % 3, 3).float())

    ra = torch.compile(RandAugment().__call__, backend="eager")
    ra(torch.randn(1, 3, 8, 8), 2)
    ra(torch.randn(1, 3, 8, 8), 2)

    norm = torch.compile(normalize, backend="eager")
    norm(torch.randint(0, 255, (2, 3, 4, 4), dtype=torch.uint8))
    norm(torch.rand(2, 3, 4, 4))
