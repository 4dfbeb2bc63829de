"""DDIM sampler: a small denoiser plus a scheduler whose step() is compiled and driven by the timestep loop."""
import math

import torch
import torch.nn as nn


class TimeEmbedding(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.proj = nn.Sequential(nn.Linear(dim, dim * 2), nn.SiLU(), nn.Linear(dim * 2, dim))

    def forward(self, t):
        half = self.dim // 2
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
        args = t.float()[:, None] * freqs[None]
        return self.proj(torch.cat([args.sin(), args.cos()], dim=-1))


class TinyDenoiser(nn.Module):
    def __init__(self, ch=4, dim=16):
        super().__init__()
        self.temb = TimeEmbedding(dim)
        self.inp = nn.Conv2d(ch, dim, 3, padding=1)
        self.mid = nn.Conv2d(dim, dim, 3, padding=1)
        self.out = nn.Conv2d(dim, ch, 3, padding=1)

    @torch.compile(backend="eager")
    def forward(self, x, t):
        h = self.inp(x)
        h = h + self.temb(t)[:, :, None, None]
        h = self.mid(torch.nn.functional.silu(h))
        return self.out(torch.nn.functional.silu(h))


class DDIMScheduler:
    def __init__(self, num_train_timesteps=1000, beta_start=1e-4, beta_end=0.02):
        betas = torch.linspace(beta_start, beta_end, num_train_timesteps)
        self.alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)
        self.final_alpha_cumprod = torch.tensor(1.0)
        self.num_train_timesteps = num_train_timesteps
        self.timesteps = None
        self.num_inference_steps = None

    def set_timesteps(self, n):
        self.num_inference_steps = n
        ratio = self.num_train_timesteps // n
        self.timesteps = list(range(0, n * ratio, ratio))[::-1]

    def step(self, model_output, timestep, sample, eta=0.0, generator=None):
        prev_timestep = timestep - self.num_train_timesteps // self.num_inference_steps
        alpha_prod_t = self.alphas_cumprod[timestep]
        if prev_timestep >= 0:
            alpha_prod_prev = self.alphas_cumprod[prev_timestep]
        else:
            alpha_prod_prev = self.final_alpha_cumprod
        beta_prod_t = 1 - alpha_prod_t
        pred_x0 = (sample - beta_prod_t.sqrt() * model_output) / alpha_prod_t.sqrt()
        variance = (1 - alpha_prod_prev) / beta_prod_t * (1 - alpha_prod_t / alpha_prod_prev)
        std_dev_t = eta * variance.sqrt()
        direction = (1 - alpha_prod_prev - std_dev_t ** 2).sqrt() * model_output
        prev_sample = alpha_prod_prev.sqrt() * pred_x0 + direction
        if eta > 0:
            noise = torch.randn(model_output.shape, generator=generator)
            prev_sample = prev_sample + std_dev_t * noise
        return prev_sample


def sample(model, scheduler, shape, steps, eta):
    scheduler.set_timesteps(steps)
    x = torch.randn(shape)
    step_fn = torch.compile(scheduler.step, backend="eager")
    for t in scheduler.timesteps:
        t_batch = torch.full((shape[0],), t, dtype=torch.long)
        eps = model(x, t_batch)
        x = step_fn(eps, t, x, eta=eta)
    return x


def main():
    torch.manual_seed(0)
    model = TinyDenoiser().eval()
    sched = DDIMScheduler()
    with torch.no_grad():
        sample(model, sched, (2, 4, 8, 8), steps=4, eta=0.0)
        sample(model, sched, (1, 4, 8, 8), steps=3, eta=0.5)
