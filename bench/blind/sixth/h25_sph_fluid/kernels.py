import math

import torch


def poly6(r2, h):
    coef = 315.0 / (64.0 * math.pi * h ** 9)
    return coef * torch.clamp(h * h - r2, min=0.0) ** 3


def spiky_grad(diff, r, h):
    coef = -45.0 / (math.pi * h ** 6)
    mag = coef * torch.clamp(h - r, min=0.0) ** 2 / r.clamp(min=1e-6)
    return mag[..., None] * diff


def viscosity_lap(r, h):
    coef = 45.0 / (math.pi * h ** 6)
    return coef * torch.clamp(h - r, min=0.0)
