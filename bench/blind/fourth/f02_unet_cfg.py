import math
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


def get_timestep_embedding(
    timesteps: torch.Tensor,
    embedding_dim: int,
    flip_sin_to_cos: bool = False,
    downscale_freq_shift: float = 1,
    scale: float = 1,
    max_period: int = 10000,
) -> torch.Tensor:
    assert len(timesteps.shape) == 1, "Timesteps should be a 1d-array"

    half_dim = embedding_dim // 2
    exponent = -math.log(max_period) * torch.arange(start=0, end=half_dim, dtype=torch.float32, device=timesteps.device)
    exponent = exponent / (half_dim - downscale_freq_shift)

    emb = torch.exp(exponent)
    emb = timesteps[:, None].float() * emb[None, :]
    emb = scale * emb
    emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=-1)

    if flip_sin_to_cos:
        emb = torch.cat([emb[:, half_dim:], emb[:, :half_dim]], dim=-1)

    if embedding_dim % 2 == 1:
        emb = torch.nn.functional.pad(emb, (0, 1, 0, 0))
    return emb


@dataclass
class UNetConfig:
    in_channels: int = 4
    out_channels: int = 4
    block_out_channels: Tuple[int, ...] = (16, 32)
    cross_attention_dim: int = 24
    attention_head_dim: int = 8
    norm_num_groups: int = 8
    flip_sin_to_cos: bool = True
    freq_shift: int = 0


@dataclass
class UNet2DConditionOutput:
    sample: torch.Tensor


class ResnetBlock2D(nn.Module):
    def __init__(self, in_channels, out_channels, temb_channels, groups=8, output_scale_factor=1.0):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, in_channels)
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.time_emb_proj = nn.Linear(temb_channels, out_channels)
        self.norm2 = nn.GroupNorm(groups, out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1)
        self.nonlinearity = nn.SiLU()
        self.output_scale_factor = output_scale_factor
        self.conv_shortcut = nn.Conv2d(in_channels, out_channels, 1) if in_channels != out_channels else None

    def forward(self, input_tensor, temb):
        hidden_states = self.nonlinearity(self.norm1(input_tensor))
        hidden_states = self.conv1(hidden_states)
        if temb is not None:
            temb = self.time_emb_proj(self.nonlinearity(temb))[:, :, None, None]
            hidden_states = hidden_states + temb
        hidden_states = self.conv2(self.nonlinearity(self.norm2(hidden_states)))
        if self.conv_shortcut is not None:
            input_tensor = self.conv_shortcut(input_tensor)
        return (input_tensor + hidden_states) / self.output_scale_factor


class CrossAttention(nn.Module):
    def __init__(self, query_dim, cross_attention_dim, heads, dim_head):
        super().__init__()
        inner = heads * dim_head
        self.heads = heads
        self.to_q = nn.Linear(query_dim, inner, bias=False)
        self.to_k = nn.Linear(cross_attention_dim, inner, bias=False)
        self.to_v = nn.Linear(cross_attention_dim, inner, bias=False)
        self.to_out = nn.ModuleList([nn.Linear(inner, query_dim), nn.Dropout(0.0)])

    def forward(self, hidden_states, encoder_hidden_states=None, attention_mask=None, scale: float = 1.0):
        batch, seq, _ = hidden_states.shape
        context = hidden_states if encoder_hidden_states is None else encoder_hidden_states
        q = self.to_q(hidden_states)
        k = self.to_k(context)
        v = self.to_v(context)
        head_dim = q.shape[-1] // self.heads
        q, k, v = (t.view(batch, -1, self.heads, head_dim).transpose(1, 2) for t in (q, k, v))
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask)
        out = out.transpose(1, 2).reshape(batch, -1, self.heads * head_dim)
        for layer in self.to_out:
            out = layer(out)
        return out * scale


class Transformer2DModel(nn.Module):
    def __init__(self, channels, cross_attention_dim, heads, groups):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)
        self.proj_in = nn.Linear(channels, channels)
        self.attn = CrossAttention(channels, cross_attention_dim, heads, channels // heads)
        self.proj_out = nn.Linear(channels, channels)

    def forward(self, hidden_states, encoder_hidden_states, attention_mask=None, cross_attention_kwargs=None):
        cross_attention_kwargs = cross_attention_kwargs if cross_attention_kwargs is not None else {}
        lora_scale = cross_attention_kwargs.get("scale", 1.0)
        b, c, h, w = hidden_states.shape
        residual = hidden_states
        hidden_states = self.norm(hidden_states).permute(0, 2, 3, 1).reshape(b, h * w, c)
        hidden_states = self.proj_in(hidden_states)
        hidden_states = hidden_states + self.attn(hidden_states, encoder_hidden_states, attention_mask, scale=lora_scale)
        hidden_states = self.proj_out(hidden_states)
        hidden_states = hidden_states.reshape(b, h, w, c).permute(0, 3, 1, 2).contiguous()
        return hidden_states + residual


class UNet2DConditionModel(nn.Module):
    def __init__(self, config: UNetConfig):
        super().__init__()
        self.config = config
        ch = config.block_out_channels
        temb_dim = ch[0] * 4
        self.conv_in = nn.Conv2d(config.in_channels, ch[0], 3, padding=1)
        self.time_embedding = nn.Sequential(nn.Linear(ch[0], temb_dim), nn.SiLU(), nn.Linear(temb_dim, temb_dim))
        self.down_res = nn.ModuleList()
        self.down_attn = nn.ModuleList()
        self.downsamplers = nn.ModuleList()
        prev = ch[0]
        for i, c in enumerate(ch):
            self.down_res.append(ResnetBlock2D(prev, c, temb_dim, config.norm_num_groups))
            self.down_attn.append(Transformer2DModel(c, config.cross_attention_dim, c // config.attention_head_dim, config.norm_num_groups))
            is_final = i == len(ch) - 1
            self.downsamplers.append(nn.Identity() if is_final else nn.Conv2d(c, c, 3, stride=2, padding=1))
            prev = c
        self.mid = ResnetBlock2D(prev, prev, temb_dim, config.norm_num_groups)
        self.up_res = nn.ModuleList()
        for i, c in enumerate(reversed(ch)):
            skip = c
            out = list(reversed(ch))[min(i + 1, len(ch) - 1)]
            self.up_res.append(ResnetBlock2D(prev + skip, out, temb_dim, config.norm_num_groups))
            prev = out
        self.conv_norm_out = nn.GroupNorm(config.norm_num_groups, prev)
        self.conv_out = nn.Conv2d(prev, config.out_channels, 3, padding=1)

    def forward(
        self,
        sample: torch.Tensor,
        timestep,
        encoder_hidden_states: torch.Tensor,
        encoder_attention_mask: Optional[torch.Tensor] = None,
        cross_attention_kwargs: Optional[Dict[str, Any]] = None,
        return_dict: bool = True,
    ):
        default_overall_up_factor = 2 ** (len(self.config.block_out_channels) - 1)
        forward_upsample_size = False
        if any(s % default_overall_up_factor != 0 for s in sample.shape[-2:]):
            forward_upsample_size = True

        if encoder_attention_mask is not None:
            encoder_attention_mask = (1 - encoder_attention_mask.to(sample.dtype)) * -10000.0
            encoder_attention_mask = encoder_attention_mask[:, None, None, :]

        timesteps = timestep
        if not torch.is_tensor(timesteps):
            is_mps = sample.device.type == "mps"
            if isinstance(timestep, float):
                dtype = torch.float32 if is_mps else torch.float64
            else:
                dtype = torch.int32 if is_mps else torch.int64
            timesteps = torch.tensor([timesteps], dtype=dtype, device=sample.device)
        elif len(timesteps.shape) == 0:
            timesteps = timesteps[None].to(sample.device)
        timesteps = timesteps.expand(sample.shape[0])

        t_emb = get_timestep_embedding(
            timesteps,
            self.config.block_out_channels[0],
            flip_sin_to_cos=self.config.flip_sin_to_cos,
            downscale_freq_shift=self.config.freq_shift,
        ).to(dtype=sample.dtype)
        emb = self.time_embedding(t_emb)

        sample = self.conv_in(sample)
        skips = []
        for res, attn, down in zip(self.down_res, self.down_attn, self.downsamplers):
            sample = res(sample, emb)
            sample = attn(sample, encoder_hidden_states, encoder_attention_mask, cross_attention_kwargs)
            skips.append(sample)
            sample = down(sample)
        sample = self.mid(sample, emb)
        for res in self.up_res:
            skip = skips.pop()
            if sample.shape[-2:] != skip.shape[-2:]:
                upsample_size = skip.shape[-2:] if forward_upsample_size else None
                if upsample_size is None:
                    sample = F.interpolate(sample, scale_factor=2.0, mode="nearest")
                else:
                    sample = F.interpolate(sample, size=upsample_size, mode="nearest")
            sample = res(torch.cat([sample, skip], dim=1), emb)
        sample = self.conv_out(F.silu(self.conv_norm_out(sample)))
        if not return_dict:
            return (sample,)
        return UNet2DConditionOutput(sample=sample)


@torch.no_grad()
def run_pipeline(unet, prompt_embeds, negative_embeds, timesteps, guidance_scale=7.5, height=8, width=8,
                 attention_mask=None, cross_attention_kwargs=None, generator=None):
    do_cfg = guidance_scale > 1.0
    batch = prompt_embeds.shape[0]
    latents = torch.randn((batch, unet.config.in_channels, height, width), generator=generator)
    if do_cfg:
        prompt_embeds = torch.cat([negative_embeds, prompt_embeds])
        if attention_mask is not None:
            attention_mask = torch.cat([torch.ones_like(attention_mask), attention_mask])
    for t in timesteps:
        latent_model_input = torch.cat([latents] * 2) if do_cfg else latents
        noise_pred = unet(
            latent_model_input,
            t,
            encoder_hidden_states=prompt_embeds,
            encoder_attention_mask=attention_mask,
            cross_attention_kwargs=cross_attention_kwargs,
        ).sample
        if do_cfg:
            noise_uncond, noise_text = noise_pred.chunk(2)
            noise_pred = noise_uncond + guidance_scale * (noise_text - noise_uncond)
        latents = latents - 0.1 * noise_pred
    return latents


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    unet = UNet2DConditionModel(UNetConfig()).eval()
    unet = torch.compile(unet)
    timesteps = [999, 666, 333]
    prompt = torch.randn(1, 6, 24)
    negative = torch.zeros(1, 6, 24)
    run_pipeline(unet, prompt, negative, timesteps, guidance_scale=1.0, generator=g)
    run_pipeline(unet, prompt, negative, timesteps, guidance_scale=7.5, generator=g,
                 cross_attention_kwargs={"scale": 0.8})
    mask = torch.tensor([[1, 1, 1, 1, 0, 0]])
    run_pipeline(unet, prompt, negative, timesteps, guidance_scale=7.5, height=12, width=12, generator=g,
                 attention_mask=mask, cross_attention_kwargs={"scale": 0.6})


if __name__ == "__main__":
    main()
