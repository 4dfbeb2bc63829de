import numpy as np
import torch
import torch.nn as nn


@torch.compiler.disable
def random_erasing(x, p=0.5, area=(0.02, 0.2)):
    # per-sample rectangles; easier to express eagerly
    out = x.clone()
    n, _, h, w = x.shape
    for i in range(n):
        if torch.rand(()) < p:
            frac = float(torch.empty(()).uniform_(*area))
            eh, ew = max(1, int(h * frac ** 0.5)), max(1, int(w * frac ** 0.5))
            y0, x0 = int(torch.randint(0, h - eh + 1, ())), int(torch.randint(0, w - ew + 1, ()))
            out[i, :, y0:y0 + eh, x0:x0 + ew] = 0
    return out


class BatchAugment(nn.Module):
    def __init__(self, brightness=0.2, erase_p=0.5):
        super().__init__()
        self.brightness = brightness
        self.erase_p = erase_p

    def forward(self, x):
        factor = np.random.uniform(1 - self.brightness, 1 + self.brightness)
        x = (x * factor).clamp(0, 1)
        flip = torch.rand(x.shape[0], 1, 1, 1) < 0.5
        x = torch.where(flip, x.flip(-1), x)
        return random_erasing(x, self.erase_p)
