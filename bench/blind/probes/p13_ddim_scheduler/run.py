"""Pipeline: compiled UNet-ish denoiser called with tensor timesteps; the scheduler step is compiled too."""
import torch
import torch.nn as nn

from .scheduler import DDIMScheduler


class TinyUNet(nn.Module):
    def __init__(self, ch=4, hidden=16):
        super().__init__()
        self.down = nn.Conv2d(ch, hidden, 3, padding=1)
        self.t_proj = nn.Linear(1, hidden)
        self.up = nn.Conv2d(hidden, ch, 3, padding=1)

    def forward(self, sample, timestep, return_dict=True):
        if not torch.is_tensor(timestep):
            timestep = torch.tensor([timestep], dtype=torch.long)
        elif timestep.dim() == 0:
            timestep = timestep[None]
        timestep = timestep.expand(sample.shape[0])
        emb = self.t_proj(timestep.float()[:, None] / 1000.0)
        h = torch.relu(self.down(sample) + emb[:, :, None, None])
        out = self.up(h)
        return {"sample": out} if return_dict else (out,)


class Pipeline:
    def __init__(self, unet, scheduler):
        self.unet, self.scheduler = unet, scheduler

    @torch.no_grad()
    def __call__(self, batch_size=2, num_inference_steps=4, guidance_scale=1.0):
        self.scheduler.set_timesteps(num_inference_steps)
        latents = torch.randn(batch_size, 4, 8, 8)
        step = torch.compile(self.scheduler.step)
        for t in self.scheduler.timesteps:
            noise_pred = self.unet(latents, t)["sample"]
            if guidance_scale > 1.0:
                noise_pred = noise_pred * guidance_scale
            latents = step(noise_pred, t, latents).prev_sample
        return latents


def main():
    torch.manual_seed(0)
    unet = TinyUNet()
    unet.compile()
    pipe = Pipeline(unet, DDIMScheduler())
    out = pipe(num_inference_steps=4)
    return out.shape
