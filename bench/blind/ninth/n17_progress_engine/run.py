import random

import torch
import torch.nn as nn

from .engine import Engine


def main():
    torch.manual_seed(0)
    random.seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.LayerNorm(32), nn.Linear(32, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loader = [(torch.randn(16, 10), torch.randint(0, 3, (16,))) for _ in range(4)]
    engine = Engine(model, opt)
    log = engine.run(loader, max_epochs=2)
    return len(log)
