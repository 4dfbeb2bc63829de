"""A diffusers-like DDIM scheduler (tensor timesteps, Python step index)."""
from dataclasses import dataclass
from typing import Optional

import numpy as np
import torch


@dataclass
class SchedulerOutput:
    prev_sample: torch.Tensor
    pred_original_sample: Optional[torch.Tensor] = None


class DDIMScheduler:
    def __init__(self, num_train_timesteps=100, beta_start=1e-4, beta_end=0.02, eta=0.0):
        self.num_train_timesteps = num_train_timesteps
        self.betas = torch.linspace(beta_start, beta_end, num_train_timesteps)
        self.alphas_cumprod = torch.cumprod(1.0 - self.betas, dim=0)
        self.final_alpha_cumprod = torch.tensor(1.0)
        self.eta = eta
        self.timesteps = None
        self.num_inference_steps = None
        self._step_index = None

    def set_timesteps(self, num_inference_steps):
        self.num_inference_steps = num_inference_steps
        ratio = self.num_train_timesteps // num_inference_steps
        ts = (np.arange(0, num_inference_steps) * ratio).round()[::-1].copy().astype(np.int64)
        self.timesteps = torch.from_numpy(ts)
        self._step_index = None

    def _init_step_index(self, timestep):
        indices = (self.timesteps == timestep).nonzero()
        self._step_index = indices[0].item()

    def step(self, model_output, timestep, sample, generator=None) -> SchedulerOutput:
        if self._step_index is None:
            self._init_step_index(timestep)
        prev_timestep = timestep - self.num_train_timesteps // self.num_inference_steps
        alpha_prod_t = self.alphas_cumprod[timestep]
        alpha_prod_prev = self.alphas_cumprod[prev_timestep] if prev_timestep >= 0 else self.final_alpha_cumprod
        beta_prod_t = 1 - alpha_prod_t
        x0 = (sample - beta_prod_t ** 0.5 * model_output) / alpha_prod_t ** 0.5
        variance = (1 - alpha_prod_prev) / (1 - alpha_prod_t) * (1 - alpha_prod_t / alpha_prod_prev)
        std = self.eta * variance ** 0.5
        direction = (1 - alpha_prod_prev - std ** 2) ** 0.5 * model_output
        prev = alpha_prod_prev ** 0.5 * x0 + direction
        if self.eta > 0:
            prev = prev + std * torch.randn(model_output.shape, generator=generator)
        self._step_index += 1
        return SchedulerOutput(prev_sample=prev, pred_original_sample=x0)
