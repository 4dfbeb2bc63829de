import torch
import torch.nn as nn

from .callbacks import EarlyStopping, MetricLogger
from .schedule import WarmupCosine
from .trainer import Trainer


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
    batches = [(torch.randn(16, 10), torch.randint(0, 3, (16,))) for _ in range(3)]
    trainer = Trainer(model, WarmupCosine(0.1, warmup_steps=2, total_steps=9),
                      callbacks=[MetricLogger(every=2), EarlyStopping()])
    trainer.val_data = (torch.randn(32, 10), torch.randint(0, 3, (32,)))
    trainer.fit(batches, epochs=3)
    return trainer.global_step
