"""DDPM training objective: cosine schedule buffers, q_sample with per-example timesteps, epsilon-prediction loss."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def cosine_beta_schedule(timesteps, s=0.008):
    steps = timesteps + 1
    x = torch.linspace(0, timesteps, steps, dtype=torch.float64)
    alphas_cumprod = torch.cos(((x / timesteps) + s) / (1 + s) * math.pi * 0.5) ** 2
    alphas_cumprod = alphas_cumprod / alphas_cumprod[0]
    betas = 1 - (alphas_cumprod[1:] / alphas_cumprod[:-1])
    return torch.clip(betas, 0, 0.999)


def extract(a, t, x_shape):
    b = t.shape[0]
    out = a.gather(-1, t)
    return out.reshape(b, *((1,) * (len(x_shape) - 1)))


class EpsNet(nn.Module):
    def __init__(self, ch=3, hidden=16, timesteps=100):
        super().__init__()
        self.t_embed = nn.Embedding(timesteps, hidden)
        self.conv1 = nn.Conv2d(ch, hidden, 3, padding=1)
        self.conv2 = nn.Conv2d(hidden, ch, 3, padding=1)

    def forward(self, x, t):
        h = F.silu(self.conv1(x) + self.t_embed(t)[:, :, None, None])
        return self.conv2(h)


class GaussianDiffusion(nn.Module):
    def __init__(self, model, timesteps=100):
        super().__init__()
        self.model = model
        self.num_timesteps = timesteps
        betas = cosine_beta_schedule(timesteps).float()
        alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)
        self.register_buffer("sqrt_alphas_cumprod", alphas_cumprod.sqrt())
        self.register_buffer("sqrt_one_minus_alphas_cumprod", (1.0 - alphas_cumprod).sqrt())

    def q_sample(self, x_start, t, noise):
        return (extract(self.sqrt_alphas_cumprod, t, x_start.shape) * x_start
                + extract(self.sqrt_one_minus_alphas_cumprod, t, x_start.shape) * noise)

    def forward(self, x_start, t, noise):
        x_noisy = self.q_sample(x_start, t, noise)
        pred = self.model(x_noisy, t)
        return F.mse_loss(pred, noise)


def main():
    torch.manual_seed(0)
    diffusion = GaussianDiffusion(EpsNet())
    diffusion.compile(backend="eager")
    opt = torch.optim.AdamW(diffusion.parameters(), lr=1e-3)
    for _ in range(3):
        x = torch.randn(4, 3, 8, 8)
        t = torch.randint(0, diffusion.num_timesteps, (4,))
        noise = torch.randn_like(x)
        loss = diffusion(x, t, noise)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
