"""DDIM sampling loop with a small epsilon-prediction network and a hand-rolled scheduler."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyEpsNet(nn.Module):
    def __init__(self, channels=3, hidden=16):
        super().__init__()
        self.inp = nn.Conv2d(channels, hidden, 3, padding=1)
        self.temb = nn.Sequential(nn.Linear(32, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.out = nn.Conv2d(hidden, channels, 3, padding=1)

    @staticmethod
    def timestep_embedding(t, dim=32):
        half = dim // 2
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
        args = t.float()[:, None] * freqs[None]
        return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)

    def forward(self, x, t):
        h = self.inp(x)
        h = h + self.temb(self.timestep_embedding(t))[:, :, None, None]
        return self.out(F.silu(h))


class DDIMScheduler:
    def __init__(self, num_train_timesteps=1000, beta_start=1e-4, beta_end=0.02):
        self.num_train_timesteps = num_train_timesteps
        betas = [beta_start + (beta_end - beta_start) * i / (num_train_timesteps - 1)
                 for i in range(num_train_timesteps)]
        self.alphas_cumprod = []
        prod = 1.0
        for b in betas:
            prod *= 1.0 - b
            self.alphas_cumprod.append(prod)
        self.final_alpha_cumprod = 1.0
        self.timesteps = []

    def set_timesteps(self, num_inference_steps):
        ratio = self.num_train_timesteps // num_inference_steps
        self.timesteps = [i * ratio for i in range(num_inference_steps)][::-1]
        self.step_ratio = ratio

    def step(self, model_output, timestep, sample, eta=0.0):
        prev_timestep = timestep - self.step_ratio
        alpha_prod_t = self.alphas_cumprod[timestep]
        alpha_prod_prev = self.alphas_cumprod[prev_timestep] if prev_timestep >= 0 else self.final_alpha_cumprod
        beta_prod_t = 1 - alpha_prod_t

        pred_x0 = (sample - beta_prod_t ** 0.5 * model_output) / alpha_prod_t ** 0.5
        variance = (1 - alpha_prod_prev) / beta_prod_t * (1 - alpha_prod_t / alpha_prod_prev)
        std = eta * variance ** 0.5
        direction = (1 - alpha_prod_prev - std ** 2) ** 0.5 * model_output
        prev_sample = alpha_prod_prev ** 0.5 * pred_x0 + direction
        if eta > 0:
            prev_sample = prev_sample + std * torch.randn_like(model_output)
        return prev_sample


@torch.no_grad()
def sample(unet, scheduler, shape, num_inference_steps=10, eta=0.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g)
    scheduler.set_timesteps(num_inference_steps)
    step_fn = torch.compile(scheduler.step)
    for t in scheduler.timesteps:
        tt = torch.full((shape[0],), t, dtype=torch.long)
        eps = unet(x, tt)
        x = step_fn(eps, t, x, eta=eta)
    return x


def main():
    torch.manual_seed(0)
    unet = torch.compile(TinyEpsNet().eval())
    sched = DDIMScheduler()
    imgs = sample(unet, sched, (2, 3, 8, 8), num_inference_steps=10)
    imgs2 = sample(unet, sched, (2, 3, 8, 8), num_inference_steps=4, eta=0.5, seed=1)
    print(imgs.shape, imgs2.shape)


if __name__ == "__main__":
    main()
