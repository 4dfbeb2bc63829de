import math

import torch
import torch.nn as nn


def append_zero(x):
    return torch.cat([x, x.new_zeros([1])])


def append_dims(x, target_dims):
    dims_to_append = target_dims - x.ndim
    if dims_to_append < 0:
        raise ValueError(f"input has {x.ndim} dims but target_dims is {target_dims}, which is less")
    return x[(...,) + (None,) * dims_to_append]


def get_sigmas_karras(n, sigma_min, sigma_max, rho=7.0, device="cpu"):
    ramp = torch.linspace(0, 1, n, device=device)
    min_inv_rho = sigma_min ** (1 / rho)
    max_inv_rho = sigma_max ** (1 / rho)
    sigmas = (max_inv_rho + ramp * (min_inv_rho - max_inv_rho)) ** rho
    return append_zero(sigmas).to(device)


def to_d(x, sigma, denoised):
    return (x - denoised) / append_dims(sigma, x.ndim)


def get_ancestral_step(sigma_from, sigma_to, eta=1.0):
    if not eta:
        return sigma_to, 0.0
    sigma_up = torch.minimum(sigma_to, eta * (sigma_to**2 * (sigma_from**2 - sigma_to**2) / sigma_from**2) ** 0.5)
    sigma_down = (sigma_to**2 - sigma_up**2) ** 0.5
    return sigma_down, sigma_up


def default_noise_sampler(x):
    return lambda sigma, sigma_next: torch.randn_like(x)


class DiscreteEpsDDPMDenoiser(nn.Module):
    def __init__(self, model, alphas_cumprod, quantize):
        super().__init__()
        self.inner_model = model
        self.register_buffer("sigmas", ((1 - alphas_cumprod) / alphas_cumprod) ** 0.5)
        self.register_buffer("log_sigmas", self.sigmas.log())
        self.quantize = quantize

    @property
    def sigma_min(self):
        return self.sigmas[0]

    @property
    def sigma_max(self):
        return self.sigmas[-1]

    def sigma_to_t(self, sigma, quantize=None):
        quantize = self.quantize if quantize is None else quantize
        log_sigma = sigma.log()
        dists = log_sigma - self.log_sigmas[:, None]
        if quantize:
            return dists.abs().argmin(dim=0).view(sigma.shape)
        low_idx = dists.ge(0).cumsum(dim=0).argmax(dim=0).clamp(max=self.log_sigmas.shape[0] - 2)
        high_idx = low_idx + 1
        low, high = self.log_sigmas[low_idx], self.log_sigmas[high_idx]
        w = (low - log_sigma) / (low - high)
        w = w.clamp(0, 1)
        t = (1 - w) * low_idx + w * high_idx
        return t.view(sigma.shape)

    def get_scalings(self, sigma):
        c_out = -sigma
        c_in = 1 / (sigma**2 + 1) ** 0.5
        return c_out, c_in

    def forward(self, input, sigma, **kwargs):
        c_out, c_in = [append_dims(x, input.ndim) for x in self.get_scalings(sigma)]
        eps = self.inner_model(input * c_in, self.sigma_to_t(sigma), **kwargs)
        return input + eps * c_out


class EpsNet(nn.Module):
    def __init__(self, channels=3, hidden=32):
        super().__init__()
        self.t_proj = nn.Linear(1, hidden)
        self.net = nn.Sequential(nn.Conv2d(channels, hidden, 3, padding=1), nn.GELU())
        self.out = nn.Conv2d(hidden, channels, 3, padding=1)

    def forward(self, x, t, cond=None):
        h = self.net(x) + self.t_proj(t.float()[:, None] / 1000.0)[:, :, None, None]
        if cond is not None:
            h = h + cond[:, :, None, None]
        return self.out(h)


def euler_ancestral_step(model, x, sigmas, i, extra_args, eta=1.0, s_noise=1.0, noise_sampler=None, callback=None):
    s_in = x.new_ones([x.shape[0]])
    denoised = model(x, sigmas[i] * s_in, **extra_args)
    sigma_down, sigma_up = get_ancestral_step(sigmas[i], sigmas[i + 1], eta=eta)
    if callback is not None:
        callback({"x": x, "i": i, "sigma": sigmas[i], "sigma_hat": sigmas[i], "denoised": denoised})
    d = to_d(x, sigmas[i], denoised)
    dt = sigma_down - sigmas[i]
    x = x + d * dt
    if sigmas[i + 1] > 0:
        x = x + noise_sampler(sigmas[i], sigmas[i + 1]) * s_noise * sigma_up
    return x


@torch.no_grad()
def sample_euler_ancestral(step_fn, model, x, sigmas, extra_args=None, callback=None, eta=1.0, s_noise=1.0, noise_sampler=None):
    extra_args = {} if extra_args is None else extra_args
    noise_sampler = default_noise_sampler(x) if noise_sampler is None else noise_sampler
    for i in range(len(sigmas) - 1):
        x = step_fn(model, x, sigmas, i, extra_args, eta=eta, s_noise=s_noise, noise_sampler=noise_sampler, callback=callback)
    return x


def main():
    torch.manual_seed(0)
    betas = torch.linspace(0.00085**0.5, 0.012**0.5, 1000, dtype=torch.float64) ** 2
    alphas_cumprod = torch.cumprod(1.0 - betas, dim=0).float()
    model = torch.compile(DiscreteEpsDDPMDenoiser(EpsNet().eval(), alphas_cumprod, quantize=True))
    step = torch.compile(euler_ancestral_step)

    sigmas = get_sigmas_karras(5, 0.03, 14.6)
    x = torch.randn(2, 3, 8, 8) * sigmas[0]
    sample_euler_ancestral(step, model, x, sigmas)

    previews = []
    x = torch.randn(2, 3, 8, 8) * sigmas[0]
    sample_euler_ancestral(step, model, x, sigmas, extra_args={"cond": torch.randn(2, 32)},
                           callback=lambda d: previews.append(d["denoised"]))

    sigmas = get_sigmas_karras(4, 0.03, 14.6)
    x = torch.randn(4, 3, 8, 8) * sigmas[0]
    sample_euler_ancestral(step, model, x, sigmas, eta=0.0)
    return previews


if __name__ == "__main__":
    main()
