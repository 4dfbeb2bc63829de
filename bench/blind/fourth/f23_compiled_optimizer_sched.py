import math
from typing import Iterable, List

import torch
import torch.nn as nn
import torch.nn.functional as F


class WarmupCosineSchedule:
    def __init__(self, optimizer, warmup_steps: int, total_steps: int, min_lr_ratio: float = 0.1):
        self.optimizer = optimizer
        self.warmup_steps = warmup_steps
        self.total_steps = total_steps
        self.min_lr_ratio = min_lr_ratio
        self.base_lrs = [group["lr"] for group in optimizer.param_groups]
        self.last_step = 0
        self.step()

    def get_lr_factor(self, step: int) -> float:
        if step < self.warmup_steps:
            return float(step + 1) / float(max(1, self.warmup_steps))
        progress = float(step - self.warmup_steps) / float(max(1, self.total_steps - self.warmup_steps))
        return self.min_lr_ratio + (1 - self.min_lr_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress))

    def step(self):
        factor = self.get_lr_factor(self.last_step)
        for group, base_lr in zip(self.optimizer.param_groups, self.base_lrs):
            group["lr"] = base_lr * factor
        self.last_step += 1


def param_groups_weight_decay(model: nn.Module, weight_decay: float = 1e-5, no_weight_decay_list=()):
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        if param.ndim <= 1 or name.endswith(".bias") or name in no_weight_decay_list:
            no_decay.append(param)
        else:
            decay.append(param)
    return [{"params": no_decay, "weight_decay": 0.0}, {"params": decay, "weight_decay": weight_decay}]


def grad_norm_report(parameters: Iterable[torch.Tensor], step: int, norm_type: float = 2.0) -> torch.Tensor:
    grads: List[torch.Tensor] = [p.grad for p in parameters if p.grad is not None]
    total_norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g, norm_type) for g in grads]), norm_type)
    if not torch.isfinite(total_norm):
        print(f"step {step}: non-finite grad norm, skipping")
    print(f"step {step}: grad norm {total_norm:.4f}")
    return total_norm


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(2))
        self.classifier = nn.Linear(32, 4)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


def main():
    torch.manual_seed(0)
    model = ConvNet()
    optimizer = torch.optim.AdamW(param_groups_weight_decay(model, 0.05), lr=1e-3)
    scheduler = WarmupCosineSchedule(optimizer, warmup_steps=2, total_steps=6)

    @torch.compile(fullgraph=False)
    def opt_step():
        optimizer.step()

    report = torch.compile(grad_norm_report)
    for step in range(3):
        x, y = torch.randn(4, 3, 8, 8), torch.randint(0, 4, (4,))
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        report(model.parameters(), step)
        opt_step()
        scheduler.step()


if __name__ == "__main__":
    main()
