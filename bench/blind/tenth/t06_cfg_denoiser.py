"""Classifier-free guidance wrapper around a conditional denoiser (k-diffusion / webui sampler style)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class CondUNet(nn.Module):
    def __init__(self, ch=4, ctx_dim=16, hidden=32):
        super().__init__()
        self.conv_in = nn.Conv2d(ch, hidden, 3, padding=1)
        self.ctx_proj = nn.Linear(ctx_dim, hidden)
        self.concat_in = nn.Conv2d(ch + hidden, hidden, 1)
        self.conv_out = nn.Conv2d(hidden, ch, 3, padding=1)

    def forward(self, x, sigma, cond):
        h = self.conv_in(x)
        if "c_concat" in cond:
            h = self.concat_in(torch.cat([cond["c_concat"], h], dim=1))
        ctx = self.ctx_proj(cond["c_crossattn"]).mean(1)
        h = h + ctx[:, :, None, None] + sigma.log()[:, None, None, None]
        return x - sigma[:, None, None, None] * self.conv_out(F.silu(h))


class CFGDenoiser(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.inner_model = model

    def forward(self, x, sigma, uncond, cond, cond_scale, image_cond=None):
        if cond_scale == 1.0:
            return self.inner_model(x, sigma, cond)
        x_in = torch.cat([x] * 2)
        sigma_in = torch.cat([sigma] * 2)
        cond_in = {"c_crossattn": torch.cat([uncond["c_crossattn"], cond["c_crossattn"]])}
        if image_cond is not None:
            cond_in["c_concat"] = torch.cat([image_cond] * 2)
        uncond_out, cond_out = self.inner_model(x_in, sigma_in, cond_in).chunk(2)
        return uncond_out + (cond_out - uncond_out) * cond_scale


def sample_heun(model, x, sigmas, extra_args):
    for i in range(len(sigmas) - 1):
        sigma = sigmas[i] * x.new_ones([x.shape[0]])
        denoised = model(x, sigma, **extra_args)
        d = (x - denoised) / sigmas[i]
        dt = sigmas[i + 1] - sigmas[i]
        if i == len(sigmas) - 2:
            x = x + d * dt
        else:
            x_2 = x + d * dt
            denoised_2 = model(x_2, sigmas[i + 1] * x.new_ones([x.shape[0]]), **extra_args)
            d_2 = (x_2 - denoised_2) / sigmas[i + 1]
            x = x + (d + d_2) / 2 * dt
    return x


def main():
    torch.manual_seed(0)
    denoiser = torch.compile(CFGDenoiser(CondUNet()).eval())
    sigmas = torch.tensor([10.0, 4.0, 1.5, 0.5, 0.1])
    ctx = torch.randn(2, 7, 16)
    jobs = [
        {"cond_scale": 7.5},
        {"cond_scale": 5.0},
        {"cond_scale": 1.0},
        {"cond_scale": 7.5, "image_cond": torch.randn(2, 4, 8, 8)},
    ]
    with torch.no_grad():
        for job in jobs:
            extra = dict(uncond={"c_crossattn": torch.zeros_like(ctx)}, cond={"c_crossattn": ctx}, **job)
            if "image_cond" in job:
                extra["cond"] = {"c_crossattn": ctx, "c_concat": job["image_cond"]}
            out = sample_heun(denoiser, torch.randn(2, 4, 8, 8) * 10.0, sigmas, extra)
            assert out.shape == (2, 4, 8, 8)


if __name__ == "__main__":
    main()
