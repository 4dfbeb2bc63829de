"""Image-classifier training step compiled as a whole, with a LR scheduler and metrics dict."""
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_model(num_classes=5):
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, num_classes),
    )


def cosine_lr(step, total, base_lr, warmup=2):
    if step < warmup:
        return base_lr * (step + 1) / warmup
    return 0.5 * base_lr * (1 + math.cos(math.pi * (step - warmup) / (total - warmup)))


class Trainer:
    def __init__(self, model, base_lr=0.1, total_steps=4, label_smoothing=0.1):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=base_lr, momentum=0.9)
        self.base_lr, self.total_steps = base_lr, total_steps
        self.label_smoothing = label_smoothing
        self.global_step = 0

    @torch.compile
    def train_step(self, images, labels):
        t0 = time.perf_counter()
        lr = cosine_lr(self.global_step, self.total_steps, self.base_lr)
        for g in self.opt.param_groups:
            g["lr"] = lr
        logits = self.model(images)
        loss = F.cross_entropy(logits, labels, label_smoothing=self.label_smoothing)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        if not torch.isfinite(grad_norm):
            print(f"non-finite grad norm at step {self.global_step}, skipping")
            return {"loss": float("nan")}
        self.opt.step()
        self.global_step += 1
        acc = (logits.argmax(-1) == labels).float().mean()
        return {"loss": loss.detach(), "acc": acc, "lr": lr, "time": time.perf_counter() - t0}


def main():
    torch.manual_seed(0)
    trainer = Trainer(make_model())
    trainer.model.train()
    logs = []
    for _ in range(3):
        x = torch.randn(4, 3, 8, 8)
        y = torch.randint(0, 5, (4,))
        logs.append(trainer.train_step(x, y))
    return logs


if __name__ == "__main__":
    print(main())
