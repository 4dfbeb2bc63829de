"""Training-framework style activation monitor: per-layer statistics recorded by a compiler-disabled helper."""
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F


class ActivationMonitor:
    def __init__(self, every_n_steps=1):
        self.every_n_steps = every_n_steps
        self.stats = defaultdict(list)

    @torch.compiler.disable
    def record(self, name, tensor):
        t = tensor.detach().float()
        self.stats[name].append((t.mean().item(), t.std().item(), (t == 0).float().mean().item()))


MONITOR = ActivationMonitor()


class ResBlock(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.c1 = nn.Conv2d(ch, ch, 3, padding=1)
        self.b1 = nn.BatchNorm2d(ch)
        self.c2 = nn.Conv2d(ch, ch, 3, padding=1)
        self.b2 = nn.BatchNorm2d(ch)

    def forward(self, x):
        return F.relu(x + self.b2(self.c2(F.relu(self.b1(self.c1(x))))))


class MonitoredNet(nn.Module):
    def __init__(self, ch=8, depth=3, n_classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, ch, 3, padding=1)
        self.blocks = nn.ModuleList([ResBlock(ch) for _ in range(depth)])
        self.head = nn.Linear(ch, n_classes)

    def forward(self, x):
        x = F.relu(self.stem(x))
        MONITOR.record("stem", x)
        for i, blk in enumerate(self.blocks):
            x = blk(x)
            MONITOR.record(f"block{i}", x)
        return self.head(x.mean((2, 3)))


def main():
    torch.manual_seed(0)
    model = MonitoredNet()
    compiled = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(3):
        x, y = torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,))
        loss = F.cross_entropy(compiled(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert len(MONITOR.stats["block2"]) == 3


if __name__ == "__main__":
    main()
