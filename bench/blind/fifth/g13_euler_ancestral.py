"""k-diffusion style Euler-ancestral sampling with a discrete-time eps model wrapper."""
import math

import torch
import torch.nn as nn


def append_dims(x, target_dims):
    dims_to_append = target_dims - x.ndim
    return x[(...,) + (None,) * dims_to_append]


def get_sigmas_karras(n, sigma_min, sigma_max, rho=7.0):
    ramp = torch.linspace(0, 1, n)
    min_inv_rho = sigma_min ** (1 / rho)
    max_inv_rho = sigma_max ** (1 / rho)
    sigmas = (max_inv_rho + ramp * (min_inv_rho - max_inv_rho)) ** rho
    return torch.cat([sigmas, sigmas.new_zeros([1])])


def get_ancestral_step(sigma_from, sigma_to, eta=1.0):
    if not eta:
        return sigma_to, 0.0
    sigma_up = min(sigma_to, eta * (sigma_to ** 2 * (sigma_from ** 2 - sigma_to ** 2) / sigma_from ** 2) ** 0.5)
    sigma_down = (sigma_to ** 2 - sigma_up ** 2) ** 0.5
    return sigma_down, sigma_up


class DiscreteEpsDenoiser(nn.Module):
    def __init__(self, inner_model, alphas_cumprod, quantize=False):
        super().__init__()
        self.inner_model = inner_model
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
        w = ((low - log_sigma) / (low - high)).clamp(0, 1)
        t = (1 - w) * low_idx + w * high_idx
        return t.view(sigma.shape)

    def forward(self, x, sigma, **kwargs):
        c_out = -append_dims(sigma, x.ndim)
        c_in = 1 / (append_dims(sigma, x.ndim) ** 2 + 1) ** 0.5
        eps = self.inner_model(x * c_in, self.sigma_to_t(sigma), **kwargs)
        return x + eps * c_out


class EpsNet(nn.Module):
    def __init__(self, ch=4, hidden=24):
        super().__init__()
        self.conv_in = nn.Conv2d(ch, hidden, 3, padding=1)
        self.conv_out = nn.Conv2d(hidden, ch, 3, padding=1)
        self.t_proj = nn.Linear(1, hidden)

    def forward(self, x, t, cond=None):
        h = self.conv_in(x) + self.t_proj(t[:, None].float() / 1000)[:, :, None, None]
        if cond is not None:
            h = h + cond[:, :, None, None]
        return self.conv_out(torch.tanh(h))


@torch.no_grad()
def sample_euler_ancestral(model, x, sigmas, extra_args=None, callback=None, eta=1.0, s_noise=1.0, generator=None):
    extra_args = {} if extra_args is None else extra_args
    s_in = x.new_ones([x.shape[0]])
    for i in range(len(sigmas) - 1):
        denoised = model(x, sigmas[i] * s_in, **extra_args)
        sigma_down, sigma_up = get_ancestral_step(sigmas[i].item(), sigmas[i + 1].item(), eta=eta)
        if callback is not None:
            callback({"x": x, "i": i, "sigma": sigmas[i], "denoised": denoised})
        d = (x - denoised) / append_dims(sigmas[i], x.ndim)
        x = x + d * (sigma_down - sigmas[i])
        if sigmas[i + 1] > 0:
            x = x + torch.randn(x.shape, generator=generator) * s_noise * sigma_up
    return x


def main():
    torch.manual_seed(0)
    betas = torch.linspace(0.00085 ** 0.5, 0.012 ** 0.5, 1000) ** 2
    alphas_cumprod = torch.cumprod(1 - betas, 0)
    model = DiscreteEpsDenoiser(EpsNet().eval(), alphas_cumprod)
    compiled = torch.compile(model)
    sigma_min, sigma_max = model.sigma_min.item(), model.sigma_max.item()
    gen = torch.Generator().manual_seed(1)

    preview = []
    sigmas = get_sigmas_karras(4, sigma_min, sigma_max)
    x = torch.randn(2, 4, 8, 8, generator=gen) * sigmas[0]
    out = sample_euler_ancestral(compiled, x, sigmas, generator=gen,
                                 callback=lambda d: preview.append(d["denoised"].mean().item()))

    model.quantize = True
    sigmas = get_sigmas_karras(3, sigma_min, sigma_max)
    x = torch.randn(1, 4, 8, 8, generator=gen) * sigmas[0]
    cond = torch.randn(1, 24)
    out2 = sample_euler_ancestral(compiled, x, sigmas, extra_args={"cond": cond}, eta=0.0, generator=gen)
    print(len(preview), out.shape, out2.shape, math.isfinite(out2.sum().item()))


if __name__ == "__main__":
    main()
