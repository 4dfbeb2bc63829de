"""k-diffusion-style Euler / Euler-ancestral samplers with a Karras sigma schedule and callbacks."""
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


def to_d(x, sigma, denoised):
    return (x - denoised) / append_dims(sigma, x.ndim)


class TinyUNet(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.inp = nn.Conv2d(ch, 16, 3, padding=1)
        self.emb = nn.Linear(1, 16)
        self.out = nn.Conv2d(16, ch, 3, padding=1)

    def forward(self, x, t):
        h = self.inp(x) + self.emb(t[:, None])[:, :, None, None]
        return self.out(torch.nn.functional.silu(h))


class VDenoiser(nn.Module):
    def __init__(self, inner_model, sigma_data=1.0):
        super().__init__()
        self.inner_model = inner_model
        self.sigma_data = sigma_data

    def get_scalings(self, sigma):
        c_skip = self.sigma_data ** 2 / (sigma ** 2 + self.sigma_data ** 2)
        c_out = -sigma * self.sigma_data / (sigma ** 2 + self.sigma_data ** 2) ** 0.5
        c_in = 1 / (sigma ** 2 + self.sigma_data ** 2) ** 0.5
        return c_skip, c_out, c_in

    def forward(self, input, sigma):
        c_skip, c_out, c_in = [append_dims(x, input.ndim) for x in self.get_scalings(sigma)]
        t = sigma.log() / 4
        return self.inner_model(input * c_in, t) * c_out + input * c_skip


@torch.no_grad()
def sample_euler(model, x, sigmas, extra_args=None, callback=None, s_churn=0.0, s_tmin=0.0,
                 s_tmax=float("inf"), s_noise=1.0):
    extra_args = {} if extra_args is None else extra_args
    s_in = x.new_ones([x.shape[0]])
    for i in range(len(sigmas) - 1):
        gamma = min(s_churn / (len(sigmas) - 1), 2 ** 0.5 - 1) if s_tmin <= sigmas[i] <= s_tmax else 0.0
        sigma_hat = sigmas[i] * (gamma + 1)
        if gamma > 0:
            eps = torch.randn_like(x) * s_noise
            x = x + eps * (sigma_hat ** 2 - sigmas[i] ** 2) ** 0.5
        denoised = model(x, sigma_hat * s_in, **extra_args)
        d = to_d(x, sigma_hat * s_in, denoised)
        if callback is not None:
            callback({"x": x, "i": i, "sigma": sigmas[i], "sigma_hat": sigma_hat, "denoised": denoised})
        x = x + d * (sigmas[i + 1] - sigma_hat)
    return x


def main():
    torch.manual_seed(0)
    denoiser = VDenoiser(TinyUNet()).eval()
    sampler = torch.compile(sample_euler)
    previews = []
    for steps, churn in [(4, 0.0), (6, 0.5), (4, 0.0)]:
        sigmas = get_sigmas_karras(steps, 0.03, 14.6)
        x = torch.randn(2, 4, 8, 8) * sigmas[0]
        out = sampler(denoiser, x, sigmas, s_churn=churn,
                      callback=lambda info: previews.append(info["denoised"].mean()))
        assert out.shape == x.shape and math.isfinite(out.sum().item())


if __name__ == "__main__":
    main()
