"""DDIM sampling where both the denoiser and the scheduler step are compiled."""
from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class DDIMConfig:
    num_train_timesteps: int = 1000
    beta_start: float = 0.00085
    beta_end: float = 0.012
    set_alpha_to_one: bool = False
    steps_offset: int = 1
    timestep_spacing: str = "leading"


class DDIMScheduler:
    order = 1

    def __init__(self, config: DDIMConfig):
        self.config = config
        self.betas = torch.linspace(config.beta_start ** 0.5, config.beta_end ** 0.5,
                                    config.num_train_timesteps) ** 2
        self.alphas_cumprod = torch.cumprod(1.0 - self.betas, dim=0)
        self.final_alpha_cumprod = torch.tensor(1.0) if config.set_alpha_to_one else self.alphas_cumprod[0]
        self.timesteps = None
        self.num_inference_steps = None
        self._step_index = None

    def set_timesteps(self, num_inference_steps):
        self.num_inference_steps = num_inference_steps
        if self.config.timestep_spacing == "leading":
            ratio = self.config.num_train_timesteps // num_inference_steps
            ts = (torch.arange(num_inference_steps) * ratio).flip(0) + self.config.steps_offset
        else:
            ts = torch.linspace(self.config.num_train_timesteps - 1, 0, num_inference_steps).round().long()
        self.timesteps = ts
        self._step_index = None

    def _init_step_index(self, timestep):
        indices = (self.timesteps == timestep).nonzero()
        self._step_index = indices[0].item()

    def step(self, model_output, timestep, sample, eta=0.0, generator=None):
        if self._step_index is None:
            self._init_step_index(timestep)
        prev_timestep = timestep - self.config.num_train_timesteps // self.num_inference_steps
        alpha_prod_t = self.alphas_cumprod[timestep]
        alpha_prod_t_prev = self.alphas_cumprod[prev_timestep] if prev_timestep >= 0 else self.final_alpha_cumprod
        beta_prod_t = 1 - alpha_prod_t
        pred_original = (sample - beta_prod_t ** 0.5 * model_output) / alpha_prod_t ** 0.5
        variance = (1 - alpha_prod_t_prev) / (1 - alpha_prod_t) * (1 - alpha_prod_t / alpha_prod_t_prev)
        std_dev_t = eta * variance ** 0.5
        direction = (1 - alpha_prod_t_prev - std_dev_t ** 2) ** 0.5 * model_output
        prev_sample = alpha_prod_t_prev ** 0.5 * pred_original + direction
        if eta > 0:
            noise = torch.randn(model_output.shape, generator=generator)
            prev_sample = prev_sample + std_dev_t * noise
        self._step_index += 1
        return prev_sample


class Denoiser(nn.Module):
    def __init__(self, channels=4, hidden=32):
        super().__init__()
        self.t_embed = nn.Embedding(1000, hidden)
        self.net = nn.Sequential(nn.Conv2d(channels, hidden, 3, padding=1), nn.SiLU(),
                                 nn.Conv2d(hidden, channels, 3, padding=1))
        self.film = nn.Linear(hidden, channels)

    def forward(self, x, t, context):
        scale = self.film(self.t_embed(t) + context)[:, :, None, None]
        return self.net(x) * (1 + scale)


def sample(denoiser, scheduler, step_fn, context, steps, guidance_scale, eta, generator):
    scheduler.set_timesteps(steps)
    latents = torch.randn(context.shape[0], 4, 8, 8, generator=generator)
    uncond = torch.zeros_like(context)
    for t in scheduler.timesteps:
        t_batch = t.repeat(2 * context.shape[0])
        eps = denoiser(torch.cat([latents, latents]), t_batch, torch.cat([uncond, context]))
        eps_u, eps_c = eps.chunk(2)
        eps = eps_u + guidance_scale * (eps_c - eps_u)
        latents = step_fn(eps, t, latents, eta=eta, generator=generator)
    return latents


def main():
    torch.manual_seed(0)
    scheduler = DDIMScheduler(DDIMConfig())
    denoiser = torch.compile(Denoiser().eval())
    step_fn = torch.compile(scheduler.step)
    gen = torch.Generator().manual_seed(0)
    context = torch.randn(2, 32)
    with torch.inference_mode():
        a = sample(denoiser, scheduler, step_fn, context, steps=3, guidance_scale=5.0, eta=0.0, generator=gen)
        b = sample(denoiser, scheduler, step_fn, context, steps=4, guidance_scale=7.5, eta=1.0, generator=gen)
    print(a.std().item(), b.std().item())


if __name__ == "__main__":
    main()
