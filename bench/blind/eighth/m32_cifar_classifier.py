"""Small ResNet-style image classifier with a standard fixed-shape training loop."""
from __future__ import annotations

from typing import Iterator, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = nn.Identity() if stride == 1 and cin == cout else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + self.short(x))


class TinyResNet(nn.Module):
    def __init__(self, n_cls: int = 10) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, 1, 1)
        self.layers = nn.Sequential(BasicBlock(8, 8), BasicBlock(8, 16, 2))
        self.fc = nn.Linear(16, n_cls)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.layers(F.relu(self.stem(x))).mean(dim=(2, 3)))


def loader(n: int, bs: int) -> Iterator[Tuple[torch.Tensor, torch.Tensor]]:
    x = torch.randn(n, 3, 16, 16)
    y = torch.randint(0, 10, (n,))
    perm = torch.randperm(n)
    for i in range(0, n - bs + 1, bs):
        idx = perm[i:i + bs]
        yield x[idx], y[idx]


def main() -> None:
    torch.manual_seed(0)
    model = TinyResNet()
    model.train()
    step_model = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    for epoch in range(2):
        running = torch.zeros(())
        for x, y in loader(50, 8):
            loss = F.cross_entropy(step_model(x), y, label_smoothing=0.1)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            running += loss.detach()
        sched.step()
        print(f"epoch {epoch} loss {running.item():.3f} lr {sched.get_last_lr()[0]:.4f}")


if __name__ == "__main__":
    main()
