"""Exponential moving average of model weights with a warmup-adjusted decay (as in timm / yolov5)."""
from __future__ import annotations

import copy
from typing import List

import torch
import torch.nn as nn


class ModelEMA:
    """Keeps a shadow copy of a model; decay ramps up as updates accumulate."""

    def __init__(self, model: nn.Module, decay: float = 0.999, tau: float = 20.0) -> None:
        self.ema = copy.deepcopy(model).eval()
        for p in self.ema.parameters():
            p.requires_grad_(False)
        self.decay = decay
        self.tau = tau
        self.updates = 0
        self._apply = torch.compile(self._lerp_all)

    def current_decay(self) -> float:
        import math
        return self.decay * (1 - math.exp(-self.updates / self.tau))

    def _lerp_all(self, ema_params: List[torch.Tensor], params: List[torch.Tensor]) -> None:
        d = self.current_decay()
        for e, p in zip(ema_params, params):
            e.mul_(d).add_(p.detach(), alpha=1 - d)

    @torch.no_grad()
    def update(self, model: nn.Module) -> None:
        self.updates += 1
        self._apply(list(self.ema.parameters()), list(model.parameters()))


class SmallNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.conv(x).relu().mean(dim=(2, 3)))


def main() -> None:
    torch.manual_seed(0)
    model = SmallNet()
    ema = ModelEMA(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for it in range(6):
        x = torch.randn(8, 3, 16, 16)
        y = torch.randint(0, 5, (8,))
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        ema.update(model)
        with torch.no_grad():
            gap = (ema.ema(x) - model(x)).abs().mean().item()
        print(it, round(loss.item(), 4), round(ema.current_decay(), 5), round(gap, 5))


if __name__ == "__main__":
    main()
