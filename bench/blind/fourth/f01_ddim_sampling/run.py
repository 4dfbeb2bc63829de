import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .scheduling_ddim import DDIMScheduler


class TinyDenoiser(nn.Module):
    def __init__(self, channels=4, hidden=16, time_dim=16):
        super().__init__()
        self.time_dim = time_dim
        self.time_mlp = nn.Sequential(nn.Linear(time_dim, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.conv_in = nn.Conv2d(channels, hidden, 3, padding=1)
        self.conv_out = nn.Conv2d(hidden, channels, 3, padding=1)

    def forward(self, x, t):
        half = self.time_dim // 2
        freqs = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float32) / half)
        args = t.float().reshape(-1, 1) * freqs[None]
        emb = torch.cat([args.sin(), args.cos()], dim=-1)
        h = self.conv_in(x) + self.time_mlp(emb)[:, :, None, None]
        return self.conv_out(F.silu(h))


@torch.no_grad()
def sample(unet, scheduler, step_fn, shape, num_inference_steps=10, eta=0.0, generator=None):
    scheduler.set_timesteps(num_inference_steps)
    latents = torch.randn(shape, generator=generator) * scheduler.init_noise_sigma
    for t in scheduler.timesteps:
        latent_model_input = scheduler.scale_model_input(latents, t)
        noise_pred = unet(latent_model_input, t)
        latents = step_fn(noise_pred, t, latents, eta=eta, generator=generator).prev_sample
    return latents


def main():
    torch.manual_seed(0)
    scheduler = DDIMScheduler(beta_schedule="squaredcos_cap_v2", clip_sample=False)
    unet = TinyDenoiser().eval()
    step_fn = torch.compile(scheduler.step)
    g = torch.Generator().manual_seed(0)
    a = sample(unet, scheduler, step_fn, (2, 4, 8, 8), num_inference_steps=4, generator=g)
    b = sample(unet, scheduler, step_fn, (2, 4, 8, 8), num_inference_steps=8, generator=g)
    c = sample(unet, scheduler, step_fn, (2, 4, 8, 8), num_inference_steps=4, eta=0.5, generator=g)
    return a, b, c


if __name__ == "__main__":
    main()
