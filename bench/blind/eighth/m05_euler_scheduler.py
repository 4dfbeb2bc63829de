"""Karras-style Euler ancestral scheduler whose step() is compiled as a method."""
from __future__ import annotations

from typing import List

import torch
import torch.nn as nn


def karras_sigmas(n: int, sigma_min: float = 0.02, sigma_max: float = 80.0, rho: float = 7.0) -> List[float]:
    ramp = torch.linspace(0, 1, n)
    min_inv, max_inv = sigma_min ** (1 / rho), sigma_max ** (1 / rho)
    sigmas = (max_inv + ramp * (min_inv - max_inv)) ** rho
    return sigmas.tolist() + [0.0]


class EulerAncestralScheduler:
    """Keeps its own position in the sigma schedule, like most pipeline schedulers."""

    def __init__(self, num_inference_steps: int = 10) -> None:
        self.set_timesteps(num_inference_steps)

    def set_timesteps(self, n: int) -> None:
        self.sigmas = karras_sigmas(n)
        self.step_index = 0

    def scale_model_input(self, sample: torch.Tensor) -> torch.Tensor:
        sigma = self.sigmas[self.step_index]
        return sample / ((sigma ** 2 + 1) ** 0.5)

    @torch.compile
    def step(self, model_output: torch.Tensor, sample: torch.Tensor) -> torch.Tensor:
        sigma_from = self.sigmas[self.step_index]
        sigma_to = self.sigmas[self.step_index + 1]
        sigma_up = min(sigma_to, (sigma_to ** 2 * (sigma_from ** 2 - sigma_to ** 2) / sigma_from ** 2) ** 0.5)
        sigma_down = (sigma_to ** 2 - sigma_up ** 2) ** 0.5
        denoised = sample - sigma_from * model_output
        derivative = (sample - denoised) / sigma_from
        prev = sample + derivative * (sigma_down - sigma_from)
        prev = prev + torch.randn_like(prev) * sigma_up
        self.step_index += 1
        return prev


class Denoiser(nn.Module):
    def __init__(self, ch: int = 4) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(ch, 16, 3, padding=1), nn.GELU(), nn.Conv2d(16, ch, 3, padding=1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def run_pipeline(model: Denoiser, scheduler: EulerAncestralScheduler, steps: int) -> torch.Tensor:
    scheduler.set_timesteps(steps)
    latents = torch.randn(1, 4, 8, 8) * scheduler.sigmas[0]
    for _ in range(steps):
        inp = scheduler.scale_model_input(latents)
        eps = model(inp)
        latents = scheduler.step(eps, latents)
    return latents


def main() -> None:
    torch.manual_seed(0)
    model = Denoiser().eval()
    sched = EulerAncestralScheduler()
    with torch.no_grad():
        for steps in (6, 4):
            out = run_pipeline(model, sched, steps)
            print(steps, float(out.abs().mean()))


if __name__ == "__main__":
    main()
