"""Segmentation model whose forward calls metric/logging helpers (a pattern common in research code)."""
import logging
import time
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)


class RunningMeter:
    def __init__(self):
        self.history = []
        self.total = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.history.append(value)
        self.total += float(value) * n
        self.count += n

    @property
    def avg(self):
        return self.total / max(self.count, 1)


def dice_score(logits, target, eps=1e-6):
    probs = logits.softmax(1)
    onehot = F.one_hot(target, logits.size(1)).permute(0, 3, 1, 2).float()
    inter = (probs * onehot).sum((0, 2, 3))
    union = probs.sum((0, 2, 3)) + onehot.sum((0, 2, 3))
    return ((2 * inter + eps) / (union + eps)).mean()


class SegNet(nn.Module):
    def __init__(self, classes=3, log_every=2):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.cls = nn.Conv2d(8, classes, 1)
        self.dice_meter = RunningMeter()
        self.log_every = log_every
        self.register_buffer("iters", torch.zeros((), dtype=torch.long))

    def forward(self, x, target=None):
        start = time.time()
        logits = self.cls(self.enc(x))
        if target is None:
            return logits
        loss = F.cross_entropy(logits, target)
        if torch.isnan(loss):
            warnings.warn("NaN loss encountered")
        dice = dice_score(logits.detach(), target)
        self.dice_meter.update(dice)
        self.iters += 1
        if self.iters % self.log_every == 0:
            logger.info("iter %d loss %.4f dice %.4f (%.1f ms)", int(self.iters), loss, dice,
                        1000 * (time.time() - start))
        return loss


def main():
    torch.manual_seed(0)
    logging.basicConfig(level=logging.WARNING)
    model = torch.compile(SegNet())
    opt = torch.optim.Adam(model.parameters(), 1e-3)
    for _ in range(3):
        x = torch.randn(2, 3, 8, 8)
        y = torch.randint(0, 3, (2, 8, 8))
        loss = model(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model._orig_mod.dice_meter.avg


if __name__ == "__main__":
    print(main())
