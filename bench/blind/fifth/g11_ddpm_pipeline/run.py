import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .scheduler import DDPMScheduler


def timestep_embedding(timesteps, dim, max_period=10000):
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32) / half)
    args = timesteps[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, ch, emb_dim):
        super().__init__()
        self.norm1 = nn.GroupNorm(4, ch)
        self.conv1 = nn.Conv2d(ch, ch, 3, padding=1)
        self.emb = nn.Linear(emb_dim, ch)
        self.norm2 = nn.GroupNorm(4, ch)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1)

    def forward(self, x, emb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.emb(emb)[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return x + h


class TinyUNet(nn.Module):
    def __init__(self, in_ch=3, ch=16, cond_dim=8):
        super().__init__()
        self.ch = ch
        self.time_mlp = nn.Sequential(nn.Linear(ch, 2 * ch), nn.SiLU(), nn.Linear(2 * ch, 2 * ch))
        self.cond_proj = nn.Linear(cond_dim, 2 * ch)
        self.inp = nn.Conv2d(in_ch, ch, 3, padding=1)
        self.down = ResBlock(ch, 2 * ch)
        self.mid = ResBlock(ch, 2 * ch)
        self.out = nn.Conv2d(ch, in_ch, 3, padding=1)

    def forward(self, sample, timestep, encoder_hidden_states):
        if not torch.is_tensor(timestep):
            timestep = torch.tensor([timestep], dtype=torch.long)
        timestep = timestep.expand(sample.shape[0])
        emb = self.time_mlp(timestep_embedding(timestep, self.ch))
        emb = emb + self.cond_proj(encoder_hidden_states)
        h = self.inp(sample)
        h = self.mid(self.down(h, emb), emb)
        return self.out(F.silu(h))


@torch.no_grad()
def generate(unet, scheduler, cond, num_inference_steps=4, guidance_scale=7.5, generator=None, size=8):
    batch = cond.shape[0]
    do_cfg = guidance_scale > 1.0
    if do_cfg:
        cond = torch.cat([torch.zeros_like(cond), cond])
    scheduler.set_timesteps(num_inference_steps)
    latents = torch.randn(batch, 3, size, size, generator=generator) * scheduler.init_noise_sigma
    for t in scheduler.timesteps:
        model_in = torch.cat([latents] * 2) if do_cfg else latents
        noise_pred = unet(model_in, t.item(), cond)
        if do_cfg:
            uncond, text = noise_pred.chunk(2)
            noise_pred = uncond + guidance_scale * (text - uncond)
        latents = scheduler.step(noise_pred, t, latents, generator=generator).prev_sample
    return (latents / 2 + 0.5).clamp(0, 1)


def main():
    torch.manual_seed(0)
    unet = TinyUNet().eval()
    unet = torch.compile(unet)
    scheduler = DDPMScheduler(num_train_timesteps=100, beta_schedule="squaredcos_cap_v2")
    gen = torch.Generator().manual_seed(42)

    images = generate(unet, scheduler, torch.randn(2, 8), num_inference_steps=4, generator=gen)
    print("cfg images", images.shape)
    images = generate(unet, scheduler, torch.randn(1, 8), num_inference_steps=3, guidance_scale=1.0, generator=gen)
    print("no-cfg images", images.shape)


if __name__ == "__main__":
    main()
