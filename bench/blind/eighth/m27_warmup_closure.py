"""Closure-based training loop factory with linear loss-weight warm-up for an auxiliary head."""
from __future__ import annotations

from typing import Callable, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


class TwoHeadNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.main_head = nn.Linear(32, 3)
        self.aux_head = nn.Linear(32, 1)

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        h = self.trunk(x)
        return self.main_head(h), self.aux_head(h).squeeze(-1)


def make_train_step(model: nn.Module, opt: torch.optim.Optimizer, aux_weight: float = 0.5,
                    warmup_steps: int = 4) -> Callable[[torch.Tensor, torch.Tensor, torch.Tensor], float]:
    step = 0

    @torch.compile
    def compute_loss(x: torch.Tensor, y: torch.Tensor, y_aux: torch.Tensor) -> torch.Tensor:
        logits, aux = model(x)
        ramp = min(1.0, step / warmup_steps)
        return F.cross_entropy(logits, y) + aux_weight * ramp * F.mse_loss(aux, y_aux)

    def train_step(x: torch.Tensor, y: torch.Tensor, y_aux: torch.Tensor) -> float:
        nonlocal step
        loss = compute_loss(x, y, y_aux)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        return loss.item()

    return train_step


def main() -> None:
    torch.manual_seed(0)
    model = TwoHeadNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    train_step = make_train_step(model, opt)
    for i in range(7):
        x = torch.randn(16, 10)
        y = torch.randint(0, 3, (16,))
        y_aux = x[:, 0] * 2
        print(i, round(train_step(x, y, y_aux), 4))


if __name__ == "__main__":
    main()
