"""Manual dynamic loss scaling and adaptive gradient clipping for low-precision training."""
from __future__ import annotations

from typing import List

import torch
import torch.nn as nn
import torch.nn.functional as F


class DynamicLossScaler:
    def __init__(self, init_scale: float = 2.0 ** 10, growth_interval: int = 3) -> None:
        self.scale = init_scale
        self.growth_interval = growth_interval
        self._good_steps = 0

    def update(self, found_inf: bool) -> None:
        if found_inf:
            self.scale /= 2
            self._good_steps = 0
        else:
            self._good_steps += 1
            if self._good_steps % self.growth_interval == 0:
                self.scale *= 2


@torch.compile
def scaled_loss(model: nn.Module, x: torch.Tensor, y: torch.Tensor, scale: float) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(x)
    loss = F.mse_loss(out.float(), y)
    return loss * scale


@torch.compile
def unscale_and_clip(grads: List[torch.Tensor], inv_scale: float, max_norm: float) -> torch.Tensor:
    total = torch.zeros(())
    for g in grads:
        g.mul_(inv_scale)
        total = total + g.pow(2).sum()
    norm = total.sqrt()
    found_inf = ~torch.isfinite(norm)
    coef = (max_norm / (norm + 1e-6)).clamp(max=1.0)
    if found_inf.item():
        return found_inf
    for g in grads:
        g.mul_(coef)
    return found_inf


def main() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 48), nn.Tanh(), nn.Linear(48, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = DynamicLossScaler()
    grad_norm_history: List[float] = [1.0]
    for step in range(6):
        x, y = torch.randn(32, 12), torch.randn(32, 4)
        loss = scaled_loss(model, x, y, scaler.scale)
        opt.zero_grad()
        loss.backward()
        grads = [p.grad for p in model.parameters()]
        max_norm = 2.0 * sorted(grad_norm_history)[len(grad_norm_history) // 2]
        found_inf = bool(unscale_and_clip(grads, 1.0 / scaler.scale, max_norm))
        if not found_inf:
            opt.step()
            grad_norm_history.append(torch.stack([g.norm() for g in grads]).norm().item())
        scaler.update(found_inf)
        print(step, scaler.scale, round(max_norm, 4), round(loss.item() / scaler.scale, 5))


if __name__ == "__main__":
    main()
