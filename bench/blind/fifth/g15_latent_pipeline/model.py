"""Tiny latent-diffusion components: a conditional UNet, a VAE decoder and an Euler scheduler."""
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F


class CondUNet(nn.Module):
    def __init__(self, latent_ch=4, hidden=16, ctx_dim=12):
        super().__init__()
        self.config = SimpleNamespace(in_channels=latent_ch, sample_size=8)
        self.conv_in = nn.Conv2d(latent_ch, hidden, 3, padding=1)
        self.t_proj = nn.Linear(1, hidden)
        self.ctx_proj = nn.Linear(ctx_dim, hidden)
        self.conv_out = nn.Conv2d(hidden, latent_ch, 3, padding=1)

    def forward(self, sample, timestep, encoder_hidden_states, return_dict=True):
        t = timestep.reshape(-1, 1).float().expand(sample.shape[0], 1) / 1000.0
        ctx = self.ctx_proj(encoder_hidden_states.mean(dim=1))
        h = self.conv_in(sample) + (self.t_proj(t) + ctx)[:, :, None, None]
        out = self.conv_out(F.silu(h))
        return SimpleNamespace(sample=out) if return_dict else (out,)


class VAEDecoder(nn.Module):
    def __init__(self, latent_ch=4, hidden=16, scaling_factor=0.18215):
        super().__init__()
        self.config = SimpleNamespace(scaling_factor=scaling_factor)
        self.use_tiling = False
        self.tile_latent_size = 8
        self.conv = nn.Conv2d(latent_ch, hidden, 3, padding=1)
        self.up = nn.ConvTranspose2d(hidden, 3, 4, stride=2, padding=1)

    def enable_tiling(self, tile_latent_size=8):
        self.use_tiling = True
        self.tile_latent_size = tile_latent_size

    def _decode(self, z):
        return torch.tanh(self.up(F.silu(self.conv(z))))

    def tiled_decode(self, z):
        rows = []
        ts = self.tile_latent_size
        for i in range(0, z.shape[2], ts):
            row = [self._decode(z[:, :, i : i + ts, j : j + ts]) for j in range(0, z.shape[3], ts)]
            rows.append(torch.cat(row, dim=3))
        return torch.cat(rows, dim=2)

    def decode(self, z):
        if self.use_tiling and (z.shape[-1] > self.tile_latent_size or z.shape[-2] > self.tile_latent_size):
            return self.tiled_decode(z)
        return self._decode(z)


class EulerDiscreteScheduler:
    def __init__(self, num_train_timesteps=1000):
        betas = torch.linspace(0.00085 ** 0.5, 0.012 ** 0.5, num_train_timesteps) ** 2
        self.alphas_cumprod = torch.cumprod(1 - betas, 0)
        self.num_train_timesteps = num_train_timesteps
        self._step_index = None

    @property
    def init_noise_sigma(self):
        return (self.sigmas.max() ** 2 + 1) ** 0.5

    @property
    def step_index(self):
        return self._step_index

    def set_timesteps(self, n):
        self.timesteps = torch.linspace(0, self.num_train_timesteps - 1, n).flip(0).round()
        sigmas = ((1 - self.alphas_cumprod) / self.alphas_cumprod) ** 0.5
        sigmas = sigmas[self.timesteps.long()]
        self.sigmas = torch.cat([sigmas, sigmas.new_zeros(1)])
        self._step_index = 0

    def scale_model_input(self, sample, timestep):
        sigma = self.sigmas[self._step_index]
        return sample / ((sigma ** 2 + 1) ** 0.5)

    def step(self, model_output, timestep, sample):
        sigma = self.sigmas[self._step_index]
        sigma_next = self.sigmas[self._step_index + 1]
        pred_original = sample - sigma * model_output
        derivative = (sample - pred_original) / sigma
        prev = sample + derivative * (sigma_next - sigma)
        self._step_index += 1
        return prev
