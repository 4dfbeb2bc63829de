"""Pieces of a diffusion model: timestep embeddings, a conditioned residual block, a sampler step with
classifier-free guidance, and the scheduler bookkeeping around it."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def timestep_embedding(t, dim: int, max_period: float = 10000.0):
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32) / half)  # ok
    args = t[:, None].float() * freqs[None]
    emb = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
    if dim % 2:  # ok
        emb = torch.cat([emb, torch.zeros_like(emb[:, :1])], dim=-1)
    return emb


class ResBlock(nn.Module):
    def __init__(self, ch: int, emb_dim: int):
        super().__init__()
        self.norm1 = nn.GroupNorm(2, ch)
        self.conv1 = nn.Conv2d(ch, ch, 3, padding=1)
        self.emb = nn.Linear(emb_dim, 2 * ch)
        self.norm2 = nn.GroupNorm(2, ch)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1)

    def forward(self, x, emb):
        h = self.conv1(F.silu(self.norm1(x)))
        scale, shift = self.emb(F.silu(emb))[:, :, None, None].chunk(2, dim=1)  # ok
        h = self.norm2(h) * (1 + scale) + shift
        return x + self.conv2(F.silu(h))


class TinyUNet(nn.Module):
    def __init__(self, ch: int = 8, emb_dim: int = 16):
        super().__init__()
        self.emb_dim = emb_dim
        self.inp = nn.Conv2d(3, ch, 3, padding=1)
        self.block = ResBlock(ch, emb_dim)
        self.out = nn.Conv2d(ch, 3, 3, padding=1)
        self.null_cond = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x, t, cond=None):
        emb = timestep_embedding(t, self.emb_dim)
        if cond is None:  # ok
            cond = self.null_cond.expand(x.shape[0], -1)
        emb = emb + cond
        if t.max() > 1000:  # expect: DYN101
            emb = emb * 0.5
        return self.out(self.block(self.inp(x), emb))


@torch.compile  # expect: DYN501
def guided_step(model, x, t, cond, guidance: float = 3.0):
    both = model(torch.cat([x, x]), torch.cat([t, t]), torch.cat([cond, torch.zeros_like(cond)]))
    eps_cond, eps_uncond = both.chunk(2)
    eps = eps_uncond + guidance * (eps_cond - eps_uncond)  # ok
    alpha = torch.cos(t.float() / 1000 * math.pi / 2)[:, None, None, None]
    return (x - (1 - alpha).sqrt() * eps) / alpha.sqrt()


def sample(model, steps: int = 3):
    x = torch.randn(1, 3, 8, 8)
    cond = torch.randn(1, 16)
    for i in reversed(range(steps)):
        t = torch.full((1,), i * 100, dtype=torch.long)  # ok
        x = guided_step(model, x, t, cond)
    return x


def __dynlint_calls__():
    torch.manual_seed(0)
    model = TinyUNet()
    sample(model)
