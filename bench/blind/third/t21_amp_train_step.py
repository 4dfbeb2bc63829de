"""Full training step compiled as one function: autocast, GradScaler, gradient clipping, LR warmup, periodic logging."""
import math
import time

import torch
import torch.nn as nn


class ConvNet(nn.Module):
    def __init__(self, n_classes=5):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        )
        self.fc = nn.Linear(16, n_classes)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        return self.fc(self.dropout(self.features(x).flatten(1)))


def lr_at(step, base_lr, warmup, total):
    if step < warmup:
        return base_lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return base_lr * 0.5 * (1 + math.cos(math.pi * progress))


class Trainer:
    def __init__(self, model, base_lr=0.1, warmup=2, total=6, max_norm=1.0, log_every=2):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=base_lr, momentum=0.9)
        self.scaler = torch.amp.GradScaler("cpu")
        self.base_lr, self.warmup, self.total = base_lr, warmup, total
        self.max_norm = max_norm
        self.log_every = log_every
        self.history = []
        self.t0 = time.time()

    @torch.compile(backend="eager")
    def train_step(self, images, labels, step):
        for g in self.opt.param_groups:
            g["lr"] = lr_at(step, self.base_lr, self.warmup, self.total)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = self.model(images)
            loss = nn.functional.cross_entropy(logits, labels, label_smoothing=0.1)
        self.opt.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.opt)
        grad_norm = nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
        self.scaler.step(self.opt)
        self.scaler.update()
        if step % self.log_every == 0:
            acc = (logits.argmax(1) == labels).float().mean()
            self.history.append({"step": step, "loss": loss.item(), "acc": acc.item(),
                                 "grad_norm": float(grad_norm), "time": time.time() - self.t0})
        return loss.detach()


def main():
    torch.manual_seed(0)
    trainer = Trainer(ConvNet())
    trainer.model.train()
    for step in range(4):
        x = torch.randn(4, 3, 16, 16)
        y = torch.randint(0, 5, (4,))
        trainer.train_step(x, y, step)
