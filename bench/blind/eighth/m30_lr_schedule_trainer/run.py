"""Drive the trainer with per-step hyper-parameters."""
from __future__ import annotations

import torch
import torch.nn as nn

from .schedule import WarmupCosine, weight_decay_for
from .trainer import MomentumTrainer


def main() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    trainer = MomentumTrainer(model)
    sched = WarmupCosine(base_lr=0.1, warmup_steps=2, total_steps=8)
    for step in range(8):
        trainer.lr = sched(step)
        trainer.weight_decay = weight_decay_for(step)
        x, y = torch.randn(16, 16), torch.randint(0, 4, (16,))
        loss = trainer.train_step(x, y)
        print(step, round(trainer.lr, 4), round(trainer.weight_decay, 3), round(loss, 4))


if __name__ == "__main__":
    main()
