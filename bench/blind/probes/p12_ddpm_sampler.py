"""DDPM ancestral sampler: the per-step denoise update is compiled, the timestep loop lives in Python."""
import math

import torch
import torch.nn as nn


def cosine_beta_schedule(T, s=0.008):
    steps = torch.arange(T + 1, dtype=torch.float64)
    f = torch.cos(((steps / T) + s) / (1 + s) * math.pi / 2) ** 2
    alphas_bar = f / f[0]
    betas = 1 - alphas_bar[1:] / alphas_bar[:-1]
    return betas.clamp(max=0.999).float()


class SinusoidalEmbedding(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, t):
        half = self.dim // 2
        freqs = torch.exp(-math.log(10000) * torch.arange(half, device=t.device) / half)
        args = t.float()[:, None] * freqs[None]
        return torch.cat([args.sin(), args.cos()], dim=-1)


class Denoiser(nn.Module):
    def __init__(self, dim=8, hidden=32):
        super().__init__()
        self.temb = nn.Sequential(SinusoidalEmbedding(hidden), nn.Linear(hidden, hidden), nn.SiLU())
        self.inp = nn.Linear(dim, hidden)
        self.out = nn.Sequential(nn.SiLU(), nn.Linear(hidden, dim))

    def forward(self, x, t):
        return self.out(self.inp(x) + self.temb(t))


class DDPM:
    def __init__(self, model, T=10):
        self.model, self.T = model, T
        self.betas = cosine_beta_schedule(T)
        self.alphas = 1 - self.betas
        self.alphas_bar = torch.cumprod(self.alphas, 0)

    @torch.compile
    def p_sample(self, x, t: int, clip_denoised=True):
        tt = torch.full((x.shape[0],), t, dtype=torch.long)
        eps = self.model(x, tt)
        a, ab, b = self.alphas[t], self.alphas_bar[t], self.betas[t]
        x0 = (x - (1 - ab).sqrt() * eps) / ab.sqrt()
        if clip_denoised:
            x0 = x0.clamp(-1, 1)
        ab_prev = self.alphas_bar[t - 1] if t > 0 else torch.tensor(1.0)
        mean = (ab_prev.sqrt() * b / (1 - ab)) * x0 + (a.sqrt() * (1 - ab_prev) / (1 - ab)) * x
        if t == 0:
            return mean
        var = b * (1 - ab_prev) / (1 - ab)
        return mean + var.sqrt() * torch.randn_like(x)

    @torch.no_grad()
    def sample(self, shape):
        x = torch.randn(shape)
        for t in reversed(range(self.T)):
            x = self.p_sample(x, t)
        return x


def main():
    torch.manual_seed(0)
    ddpm = DDPM(Denoiser(), T=10)
    out = ddpm.sample((4, 8))
    return out.abs().mean().item()


if __name__ == "__main__":
    print(main())
