"""Batch-level MixUp / CutMix applied inside a compiled training step."""
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def rand_bbox(h, w, lam, rng):
    cut = np.sqrt(1.0 - lam)
    ch, cw = int(h * cut), int(w * cut)
    cy, cx = rng.integers(h), rng.integers(w)
    y1, y2 = np.clip(cy - ch // 2, 0, h), np.clip(cy + ch // 2, 0, h)
    x1, x2 = np.clip(cx - cw // 2, 0, w), np.clip(cx + cw // 2, 0, w)
    return int(y1), int(y2), int(x1), int(x2)


def mix_step(model, x, y, perm, lam, use_cutmix, box, num_classes=10):
    y1h = F.one_hot(y, num_classes).float()
    if use_cutmix:
        y1_, y2_, x1_, x2_ = box
        x = x.clone()
        x[:, :, y1_:y2_, x1_:x2_] = x[perm, :, y1_:y2_, x1_:x2_]
        lam = 1 - ((y2_ - y1_) * (x2_ - x1_) / (x.shape[-1] * x.shape[-2]))
    else:
        x = lam * x + (1 - lam) * x[perm]
    target = lam * y1h + (1 - lam) * y1h[perm]
    logits = model(x)
    return torch.sum(-target * F.log_softmax(logits, -1), dim=-1).mean()


def main():
    random.seed(0)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(8, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    step = torch.compile(mix_step)
    cutmix_prob, alpha = 0.5, 1.0
    for _ in range(5):
        x, y = torch.randn(8, 3, 16, 16), torch.randint(0, 10, (8,))
        perm = torch.randperm(8)
        lam = rng.beta(alpha, alpha)
        use_cutmix = random.random() < cutmix_prob
        box = rand_bbox(16, 16, lam, rng)
        loss = step(model, x, y, perm, lam, use_cutmix, box)
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
