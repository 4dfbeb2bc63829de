"""DPM-Solver++(2M) sampling with a compiled, guidance-fused noise predictor.

The predictor takes every per-step quantity as a tensor (timesteps, guidance
scale), so one compiled graph serves the whole sampling loop.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class NoisePredictor(nn.Module):
    def __init__(self, channels=4, hidden=32, cond_dim=16):
        super().__init__()
        self.hidden = hidden
        self.time_mlp = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.cond_mlp = nn.Linear(cond_dim, hidden)
        self.conv_in = nn.Conv2d(channels, hidden, 3, padding=1)
        self.norm = nn.GroupNorm(8, hidden)
        self.conv_out = nn.Conv2d(hidden, channels, 3, padding=1)
        half = hidden // 2
        self.register_buffer("freqs", torch.exp(-math.log(10000.0) * torch.arange(half) / half))

    def forward(self, x, t, cond):
        args = t[:, None].float() * self.freqs[None]
        emb = self.time_mlp(torch.cat([args.cos(), args.sin()], dim=-1)) + self.cond_mlp(cond)
        h = self.conv_in(x) + emb[:, :, None, None]
        return self.conv_out(F.silu(self.norm(h)))


def guided_eps(model, x, t, cond, uncond, scale):
    x_in = torch.cat([x, x])
    t_in = torch.cat([t, t])
    eps_uncond, eps_cond = model(x_in, t_in, torch.cat([uncond, cond])).chunk(2)
    return eps_uncond + scale * (eps_cond - eps_uncond)


class NoiseScheduleVP:
    def __init__(self, num_train_timesteps=1000, beta_start=1e-4, beta_end=0.02):
        betas = torch.linspace(beta_start, beta_end, num_train_timesteps, dtype=torch.float64)
        self.log_alpha_array = 0.5 * torch.log(1 - betas).cumsum(0)
        self.total_N = num_train_timesteps

    def marginal_log_mean_coeff(self, t_idx):
        return self.log_alpha_array[t_idx]

    def marginal_alpha(self, t_idx):
        return self.marginal_log_mean_coeff(t_idx).exp()

    def marginal_std(self, t_idx):
        return torch.sqrt(1.0 - torch.exp(2.0 * self.marginal_log_mean_coeff(t_idx)))

    def marginal_lambda(self, t_idx):
        log_mean = self.marginal_log_mean_coeff(t_idx)
        log_std = 0.5 * torch.log(1.0 - torch.exp(2.0 * log_mean))
        return log_mean - log_std


@torch.no_grad()
def dpm_solver_2m(eps_fn, ns, x, steps):
    timesteps = torch.linspace(ns.total_N - 1, 0, steps + 1).round().long()
    old_x0 = None
    for i in range(steps):
        s, t = timesteps[i], timesteps[i + 1]
        t_batch = s.expand(x.shape[0]).to(torch.float32)
        eps = eps_fn(x, t_batch)
        alpha_s, sigma_s = ns.marginal_alpha(s).float(), ns.marginal_std(s).float()
        x0 = (x - sigma_s * eps) / alpha_s
        lambda_s, lambda_t = ns.marginal_lambda(s), ns.marginal_lambda(t)
        h = (lambda_t - lambda_s).float()
        alpha_t, sigma_t = ns.marginal_alpha(t).float(), ns.marginal_std(t).float()
        if old_x0 is None or i == steps - 1:
            d = x0
        else:
            r = (h_prev / h)
            d = (1 + 1 / (2 * r)) * x0 - 1 / (2 * r) * old_x0
        x = (sigma_t / sigma_s) * x - alpha_t * torch.expm1(-h) * d
        old_x0, h_prev = x0, h
    return x


def main():
    torch.manual_seed(0)
    model = NoisePredictor().eval()
    ns = NoiseScheduleVP()
    compiled_eps = torch.compile(guided_eps)
    batch = 2
    uncond = torch.zeros(batch, 16)

    for prompt_seed, scale in [(0, 4.0), (1, 7.5)]:
        g = torch.Generator().manual_seed(prompt_seed)
        cond = torch.randn(batch, 16, generator=g)
        scale_t = torch.tensor(scale)
        x = torch.randn(batch, 4, 8, 8, generator=g)
        out = dpm_solver_2m(lambda x, t: compiled_eps(model, x, t, cond, uncond, scale_t), ns, x, steps=5)
        print(f"seed={prompt_seed} scale={scale} std={out.std().item():.3f}")


if __name__ == "__main__":
    main()
