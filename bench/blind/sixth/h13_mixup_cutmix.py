"""CIFAR-style training step with mixup / cutmix regularisation."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class SmallResNet(nn.Module):
    def __init__(self, n_classes=10, width=16):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU())
        self.block = nn.Sequential(
            nn.Conv2d(width, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=1), nn.BatchNorm2d(width),
        )
        self.head = nn.Linear(width, n_classes)

    def forward(self, x):
        x = self.stem(x)
        x = F.relu(x + self.block(x))
        return self.head(x.mean((2, 3)))


def rand_bbox(h, w, lam, rng):
    cut = np.sqrt(1.0 - lam)
    ch, cw = int(h * cut), int(w * cut)
    cy, cx = rng.integers(h), rng.integers(w)
    y1, y2 = np.clip(cy - ch // 2, 0, h), np.clip(cy + ch // 2, 0, h)
    x1, x2 = np.clip(cx - cw // 2, 0, w), np.clip(cx + cw // 2, 0, w)
    return int(y1), int(y2), int(x1), int(x2)


def soft_cross_entropy(logits, y_a, y_b, lam):
    logp = F.log_softmax(logits, -1)
    return -(lam * logp.gather(1, y_a[:, None]) + (1 - lam) * logp.gather(1, y_b[:, None])).mean()


class MixTrainer:
    def __init__(self, model, alpha=1.0, cutmix_prob=0.5, seed=0):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        self.alpha, self.cutmix_prob = alpha, cutmix_prob
        self.rng = np.random.default_rng(seed)
        self.seen, self.correct = 0, 0.0

    @torch.compile
    def forward_loss(self, x, y, perm, lam, mode, box):
        if mode == "cutmix":
            y1, y2, x1, x2 = box
            x = x.clone()
            x[:, :, y1:y2, x1:x2] = x[perm, :, y1:y2, x1:x2]
            lam = 1 - (y2 - y1) * (x2 - x1) / (x.shape[-1] * x.shape[-2])
        elif mode == "mixup":
            x = lam * x + (1 - lam) * x[perm]
        logits = self.model(x)
        pred = logits.argmax(-1)
        # mixed-label accuracy, as reported in the mixup paper
        self.correct += (lam * (pred == y).float() + (1 - lam) * (pred == y[perm]).float()).sum().item()
        self.seen += x.shape[0]
        return soft_cross_entropy(logits, y, y[perm], lam)

    def step(self, x, y):
        lam = float(self.rng.beta(self.alpha, self.alpha))
        perm = torch.randperm(x.shape[0])
        box = None
        if self.rng.random() < self.cutmix_prob:
            mode = "cutmix"
            box = rand_bbox(x.shape[2], x.shape[3], lam, self.rng)
        else:
            mode = "mixup"
        loss = self.forward_loss(x, y, perm, lam, mode, box)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.detach()


def main():
    torch.manual_seed(0)
    trainer = MixTrainer(SmallResNet())
    losses = []
    for _ in range(6):
        x = torch.randn(16, 3, 16, 16)
        y = torch.randint(0, 10, (16,))
        losses.append(trainer.step(x, y))
    return torch.stack(losses), trainer.correct / trainer.seen
