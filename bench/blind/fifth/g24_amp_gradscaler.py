"""Mixed-precision training step with GradScaler, gradient clipping and a NaN guard."""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class AmpConfig:
    enabled: bool = True
    dtype: torch.dtype = torch.bfloat16
    init_scale: float = 2.0 ** 10
    clip_grad: float = 1.0
    skip_nonfinite: bool = True


class ConvNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


class AmpTrainer:
    def __init__(self, model, cfg: AmpConfig, lr=0.05):
        self.model = model
        self.cfg = cfg
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
        self.scaler = torch.amp.GradScaler("cpu", init_scale=cfg.init_scale, enabled=cfg.enabled)
        self.skipped = 0
        self.compiled_forward = torch.compile(self.forward_loss)

    def forward_loss(self, images, targets, mixup_lambda=None):
        with torch.autocast("cpu", dtype=self.cfg.dtype, enabled=self.cfg.enabled):
            logits = self.model(images)
            if mixup_lambda is not None:
                perm = torch.arange(targets.shape[0] - 1, -1, -1)
                loss = mixup_lambda * F.cross_entropy(logits, targets) + \
                    (1 - mixup_lambda) * F.cross_entropy(logits, targets[perm])
            else:
                loss = F.cross_entropy(logits, targets)
        if self.cfg.skip_nonfinite and not torch.isfinite(loss):
            self.skipped += 1
            return None
        return loss

    def train_step(self, images, targets, mixup_lambda=None):
        loss = self.compiled_forward(images, targets, mixup_lambda)
        if loss is None:
            return float("nan")
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.clip_grad)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.item()


def main():
    torch.manual_seed(0)
    cfg = AmpConfig()
    trainer = AmpTrainer(ConvNet(), cfg)
    for step in range(4):
        images = torch.randn(4, 3, 16, 16)
        targets = torch.randint(0, 10, (4,))
        lam = 0.7 if step % 2 == 1 else None
        loss = trainer.train_step(images, targets, mixup_lambda=lam)
        print(f"step {step} loss {loss:.4f} scale {trainer.scaler.get_scale()}")
    # fall back to full precision for the final fine-tuning steps
    cfg.enabled = False
    loss = trainer.train_step(torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,)))
    print(f"fp32 loss {loss:.4f} skipped {trainer.skipped}")


if __name__ == "__main__":
    main()
