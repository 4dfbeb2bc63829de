"""Diffusion sampling: a DDIM-style scheduler stepping a small denoiser, with guidance and step counting."""
import torch
import torch.nn as nn


class TinyDenoiser(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 3, padding=1)
        self.temb = nn.Linear(1, ch)

    def forward(self, x, t):
        emb = self.temb(t.float().view(-1, 1) / 1000.0)
        return self.conv(x) + emb[:, :, None, None]


class DDIMScheduler:
    def __init__(self, num_train_steps=1000, num_inference_steps=10):
        betas = torch.linspace(1e-4, 0.02, num_train_steps)
        self.alphas_cumprod = torch.cumprod(1 - betas, dim=0)
        self.final_alpha = torch.tensor(1.0)
        self.step_ratio = num_train_steps // num_inference_steps
        self.timesteps = torch.arange(0, num_train_steps, self.step_ratio).flip(0)
        self.step_index = 0

    def step(self, eps, t, sample, eta=0.0):
        prev_t = t - self.step_ratio
        a_t = self.alphas_cumprod[t]
        a_prev = self.alphas_cumprod[prev_t] if prev_t >= 0 else self.final_alpha
        x0 = (sample - (1 - a_t).sqrt() * eps) / a_t.sqrt()
        dir_xt = (1 - a_prev).sqrt() * eps
        self.step_index += 1
        return a_prev.sqrt() * x0 + dir_xt


def guided_eps(model, x, t, guidance_scale):
    both = model(torch.cat([x, x]), torch.cat([t, t]).view(-1))
    uncond, cond = both.chunk(2)
    if guidance_scale == 1.0:
        return cond
    return uncond + guidance_scale * (cond - uncond)


def sample_loop(model, sched, x, guidance_scale):
    for t in sched.timesteps[:3]:
        eps = guided_eps(model, x, t.expand(x.shape[0]), guidance_scale)
        x = sched.step(eps, t, x)
    return x


def main():
    torch.manual_seed(0)
    model = TinyDenoiser()
    sched = DDIMScheduler()
    step = torch.compile(sched.step, backend="eager")
    x = torch.randn(1, 4, 8, 8)
    for t in sched.timesteps[-3:]:
        x = step(torch.randn_like(x), t, x)

    g = torch.compile(guided_eps, backend="eager")
    for scale in (1.0, 3.5, 7.5):
        g(model, x, torch.tensor([500]), scale)

    loop = torch.compile(sample_loop, backend="eager")
    loop(model, sched, torch.randn(1, 4, 8, 8), 5.0)
    loop(model, sched, torch.randn(2, 4, 8, 8), 5.0)
