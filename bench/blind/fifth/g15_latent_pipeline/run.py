import numpy as np
import torch

from .model import CondUNet, EulerDiscreteScheduler, VAEDecoder


class LatentDiffusionPipeline:
    def __init__(self, unet, vae, scheduler):
        self.unet = unet
        self.vae = vae
        self.scheduler = scheduler
        self.vae_scale_factor = 2

    def encode_prompt(self, prompt_embeds, do_classifier_free_guidance, negative_prompt_embeds=None):
        if not do_classifier_free_guidance:
            return prompt_embeds
        if negative_prompt_embeds is None:
            negative_prompt_embeds = torch.zeros_like(prompt_embeds)
        return torch.cat([negative_prompt_embeds, prompt_embeds])

    def prepare_latents(self, batch_size, height, width, generator):
        shape = (batch_size, self.unet.config.in_channels, height // self.vae_scale_factor,
                 width // self.vae_scale_factor)
        latents = torch.randn(shape, generator=generator)
        return latents * self.scheduler.init_noise_sigma

    @torch.no_grad()
    def __call__(self, prompt_embeds, height=16, width=16, num_inference_steps=4, guidance_scale=7.5,
                 negative_prompt_embeds=None, generator=None, output_type="pil",
                 callback_on_step_end=None, callback_steps=1):
        batch_size = prompt_embeds.shape[0]
        do_cfg = guidance_scale > 1.0
        embeds = self.encode_prompt(prompt_embeds, do_cfg, negative_prompt_embeds)
        self.scheduler.set_timesteps(num_inference_steps)
        latents = self.prepare_latents(batch_size, height, width, generator)

        for i, t in enumerate(self.scheduler.timesteps):
            latent_in = torch.cat([latents] * 2) if do_cfg else latents
            latent_in = self.scheduler.scale_model_input(latent_in, t)
            noise_pred = self.unet(latent_in, t, encoder_hidden_states=embeds, return_dict=False)[0]
            if do_cfg:
                noise_uncond, noise_text = noise_pred.chunk(2)
                noise_pred = noise_uncond + guidance_scale * (noise_text - noise_uncond)
            latents = self.scheduler.step(noise_pred, t, latents)
            if callback_on_step_end is not None and i % callback_steps == 0:
                callback_on_step_end(self, i, t, {"latents": latents})

        image = self.vae.decode(latents / self.vae.config.scaling_factor)
        image = (image / 2 + 0.5).clamp(0, 1)
        if output_type == "pt":
            return image
        image = image.permute(0, 2, 3, 1).float().numpy()
        return (image * 255).round().astype(np.uint8)


def main():
    torch.manual_seed(0)
    unet, vae = CondUNet().eval(), VAEDecoder().eval()
    unet = torch.compile(unet)
    vae.decode = torch.compile(vae.decode)
    pipe = LatentDiffusionPipeline(unet, vae, EulerDiscreteScheduler())
    gen = torch.Generator().manual_seed(0)
    prompts = torch.randn(2, 5, 12)

    seen = []
    img = pipe(prompts, generator=gen, callback_on_step_end=lambda p, i, t, kw: seen.append(i), callback_steps=2)
    print("np image", img.shape, img.dtype, "callbacks", seen)

    pipe.vae.enable_tiling(tile_latent_size=8)
    img = pipe(prompts[:1], height=32, width=24, num_inference_steps=3, guidance_scale=1.0,
               generator=gen, output_type="pt")
    print("tiled image", tuple(img.shape))


if __name__ == "__main__":
    main()
