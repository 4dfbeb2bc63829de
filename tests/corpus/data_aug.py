"""On-GPU data augmentation modules (random flips, crops, mixup, jitter)."""
import copy
import random

import numpy as np
import torch
import torch.nn as nn


class RandomFlip(nn.Module):
    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, images):
        flip = torch.rand(images.shape[0], 1, 1, 1, device=images.device) < self.p  # ok
        return torch.where(flip, images.flip(-1), images)


class PythonRandomFlip(nn.Module):
    def forward(self, images):
        if random.random() < 0.5:  # expect: DYN308
            images = images.flip(-1)
        return images


class ColorJitter(nn.Module):
    def forward(self, images):
        brightness = np.random.uniform(0.8, 1.2)  # expect: DYN405
        contrast = torch.empty(images.shape[0], 1, 1, 1).uniform_(0.8, 1.2)  # ok
        mean = images.mean(dim=(1, 2, 3), keepdim=True)
        return ((images - mean) * contrast + mean) * brightness  # expect: DYN510


class RandomRotate90(nn.Module):
    def forward(self, images):
        k = random.randint(0, 3)  # ok
        return torch.rot90(images, k, dims=(-2, -1))  # expect: DYN319


class Mixup(nn.Module):
    def __init__(self, alpha: float = 0.2):
        super().__init__()
        self.alpha = alpha

    def forward(self, images, targets):
        lam = torch.distributions.Beta(self.alpha, self.alpha).sample()  # ok
        perm = torch.randperm(images.shape[0])
        original = copy.deepcopy(images)  # expect: DYN304
        mixed = lam * images + (1 - lam) * original[perm]
        return mixed, lam * targets + (1 - lam) * targets[perm]


class RandomCrop(nn.Module):
    def __init__(self, size: int):
        super().__init__()
        self.size = size
        self.defaults = {"pad": 0, "fill": [0.0]}

    def forward(self, images):
        opts = copy.deepcopy(self.defaults)  # ok
        h, w = images.shape[-2:]
        top = random.randint(0, h - self.size)  # ok
        left = (w - self.size) // 2
        return images[..., : self.size, left:left + self.size] + opts["fill"][0] + top * 0.0  # expect: DYN319


def __dynlint_calls__():
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    images = torch.rand(4, 3, 8, 8)
    torch.compile(RandomFlip())(images)
    random.seed(1)
    torch.compile(PythonRandomFlip())(images)
    torch.compile(ColorJitter())(images)
    torch.compile(RandomRotate90())(images)
    torch.compile(Mixup())(images, torch.eye(4))
    torch.compile(RandomCrop(6))(images)
