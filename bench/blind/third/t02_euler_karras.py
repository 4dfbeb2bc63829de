"""k-diffusion style Euler / Heun sampler over a Karras sigma schedule with a compiled denoiser wrapper."""
import torch
import torch.nn as nn


def get_sigmas_karras(n, sigma_min, sigma_max, rho=7.0):
    ramp = torch.linspace(0, 1, n)
    min_inv_rho = sigma_min ** (1 / rho)
    max_inv_rho = sigma_max ** (1 / rho)
    sigmas = (max_inv_rho + ramp * (min_inv_rho - max_inv_rho)) ** rho
    return torch.cat([sigmas, sigmas.new_zeros([1])])


class Net(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim + 1, 64), nn.GELU(), nn.Linear(64, dim))

    def forward(self, x, c_noise):
        return self.net(torch.cat([x, c_noise.expand(x.shape[0], 1)], dim=-1))


class KarrasDenoiser(nn.Module):
    """EDM preconditioning."""

    def __init__(self, inner, sigma_data=0.5):
        super().__init__()
        self.inner = inner
        self.sigma_data = sigma_data

    def forward(self, x, sigma):
        c_skip = self.sigma_data ** 2 / (sigma ** 2 + self.sigma_data ** 2)
        c_out = sigma * self.sigma_data / (sigma ** 2 + self.sigma_data ** 2).sqrt()
        c_in = 1 / (sigma ** 2 + self.sigma_data ** 2).sqrt()
        c_noise = sigma.log() / 4
        return c_skip * x + c_out * self.inner(x * c_in, c_noise.reshape(1, 1))


def to_d(x, sigma, denoised):
    return (x - denoised) / sigma


@torch.compile(backend="eager")
def heun_step(model, x, sigmas, i, s_churn=0.0):
    sigma = sigmas[i]
    gamma = min(s_churn / (len(sigmas) - 1), 2 ** 0.5 - 1) if s_churn > 0 else 0.0
    sigma_hat = sigma * (gamma + 1)
    if gamma > 0:
        x = x + torch.randn_like(x) * (sigma_hat ** 2 - sigma ** 2).sqrt()
    denoised = model(x, sigma_hat)
    d = to_d(x, sigma_hat, denoised)
    dt = sigmas[i + 1] - sigma_hat
    if sigmas[i + 1] == 0:
        return x + d * dt
    x_2 = x + d * dt
    denoised_2 = model(x_2, sigmas[i + 1])
    d_2 = to_d(x_2, sigmas[i + 1], denoised_2)
    return x + (d + d_2) / 2 * dt


def sample_heun(model, x, sigmas, s_churn=0.0, callback=None):
    for i in range(len(sigmas) - 1):
        x = heun_step(model, x, sigmas, i, s_churn)
        if callback is not None:
            callback({"i": i, "sigma": float(sigmas[i]), "x": x})
    return x


def main():
    torch.manual_seed(0)
    model = KarrasDenoiser(Net()).eval()
    log = []
    with torch.no_grad():
        sigmas = get_sigmas_karras(4, 0.002, 80.0)
        x = torch.randn(3, 32) * sigmas[0]
        sample_heun(model, x, sigmas, callback=lambda d: log.append(d["sigma"]))
        sigmas = get_sigmas_karras(3, 0.002, 80.0)
        sample_heun(model, torch.randn(3, 32) * sigmas[0], sigmas, s_churn=1.0)
