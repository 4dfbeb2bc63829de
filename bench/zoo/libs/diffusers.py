"""diffusers: the main model classes built from small configs (after diffusers' own tests), eval and train, batch 2
then 3; and every scheduler's `step()` compiled from outside as a pipeline's denoising loop calls it (eval only:
two successive steps of one 10-step schedule on a (2, 4, 8, 8) latent, the state reset before the compiled run).
dynlint finds those steps through `compiled = ["diffusers.schedulers.*:*.step"]` (bench/zoo/score.py)."""
from . import MAX_PARAMS, MODES, Case, Skip, count_params

PACKAGE = "diffusers"
BATCHES = (2, 3)
DOWN2, UP2 = ["DownEncoderBlock2D"] * 2, ["UpDecoderBlock2D"] * 2

# class name -> (config kwargs, inputs(batch, torch, gen) -> kwargs)
MODELS = {
    "UNet2DModel": (
        dict(block_out_channels=(32, 64), layers_per_block=1, sample_size=16, in_channels=3, out_channels=3,
             down_block_types=("DownBlock2D", "AttnDownBlock2D"), up_block_types=("AttnUpBlock2D", "UpBlock2D")),
        lambda b, t, g: dict(sample=t.randn(b, 3, 16, 16, generator=g), timestep=t.tensor([10] * b))),
    "UNet2DConditionModel": (
        dict(block_out_channels=(32, 64), layers_per_block=1, sample_size=16, in_channels=4, out_channels=4,
             down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
             up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=32, attention_head_dim=8),
        lambda b, t, g: dict(sample=t.randn(b, 4, 16, 16, generator=g), timestep=t.tensor([10] * b),
                             encoder_hidden_states=t.randn(b, 6, 32, generator=g))),
    "AutoencoderKL": (
        dict(block_out_channels=[32, 64], in_channels=3, out_channels=3, down_block_types=DOWN2,
             up_block_types=UP2, latent_channels=4),
        lambda b, t, g: dict(sample=t.randn(b, 3, 16, 16, generator=g))),
    "VQModel": (
        dict(block_out_channels=[32, 64], in_channels=3, out_channels=3, down_block_types=DOWN2,
             up_block_types=UP2, latent_channels=3),
        lambda b, t, g: dict(sample=t.randn(b, 3, 16, 16, generator=g))),
    "AutoencoderTiny": (
        dict(encoder_block_out_channels=(16, 16), decoder_block_out_channels=(16, 16), num_encoder_blocks=(1, 1),
             num_decoder_blocks=(1, 1), latent_channels=4),
        lambda b, t, g: dict(sample=t.randn(b, 3, 16, 16, generator=g))),
    "DiTTransformer2DModel": (
        dict(in_channels=4, out_channels=8, num_attention_heads=2, attention_head_dim=8, num_layers=2,
             patch_size=2, sample_size=8, num_embeds_ada_norm=8),
        lambda b, t, g: dict(hidden_states=t.randn(b, 4, 8, 8, generator=g), timestep=t.tensor([3] * b),
                             class_labels=t.tensor([1] * b))),
    "PixArtTransformer2DModel": (
        dict(sample_size=8, num_layers=2, patch_size=2, attention_head_dim=8, num_attention_heads=2,
             caption_channels=32, in_channels=4, cross_attention_dim=16, out_channels=8,
             num_embeds_ada_norm=1000),
        lambda b, t, g: dict(hidden_states=t.randn(b, 4, 8, 8, generator=g), timestep=t.tensor([3] * b),
                             encoder_hidden_states=t.randn(b, 6, 32, generator=g),
                             added_cond_kwargs={"aspect_ratio": None, "resolution": None})),
    "SD3Transformer2DModel": (
        dict(sample_size=8, patch_size=1, in_channels=4, num_layers=2, attention_head_dim=8, num_attention_heads=4,
             caption_projection_dim=32, joint_attention_dim=32, pooled_projection_dim=64, out_channels=4),
        lambda b, t, g: dict(hidden_states=t.randn(b, 4, 8, 8, generator=g), timestep=t.tensor([3] * b),
                             encoder_hidden_states=t.randn(b, 6, 32, generator=g),
                             pooled_projections=t.randn(b, 64, generator=g))),
    "FluxTransformer2DModel": (
        dict(patch_size=1, in_channels=4, num_layers=1, num_single_layers=1, attention_head_dim=16,
             num_attention_heads=2, joint_attention_dim=32, pooled_projection_dim=32, axes_dims_rope=[4, 4, 8]),
        lambda b, t, g: dict(hidden_states=t.randn(b, 16, 4, generator=g), timestep=t.tensor([3.0] * b),
                             encoder_hidden_states=t.randn(b, 6, 32, generator=g),
                             pooled_projections=t.randn(b, 32, generator=g), img_ids=t.zeros(16, 3),
                             txt_ids=t.zeros(6, 3))),
    "UNet1DModel": (
        dict(block_out_channels=(32, 32, 64), in_channels=14, out_channels=14, extra_in_channels=0,
             down_block_types=("DownResnetBlock1D",) * 3, up_block_types=("UpResnetBlock1D",) * 2,
             mid_block_type="MidResTemporalBlock1D", out_block_type="OutConv1DBlock", time_embedding_type="positional",
             use_timestep_embedding=True, flip_sin_to_cos=False, freq_shift=1.0, act_fn="mish", layers_per_block=1),
        lambda b, t, g: dict(sample=t.randn(b, 14, 16, generator=g), timestep=t.tensor([10] * b))),
}
LATENT = (2, 4, 8, 8)
STEPS = 10


def versions():
    import diffusers

    return {"diffusers": diffusers.__version__}


def schedulers():
    import diffusers

    return sorted(n for n in dir(diffusers) if n.endswith("Scheduler") and not n.startswith("Flax")
                  and n != "SchedulerMixin")


def jobs(sample=False):
    return [(name, name, MODES) for name in MODELS] + [(name, name, ("eval",)) for name in schedulers()]


def build(name, cls_name, mode):
    import diffusers
    import torch

    cls = getattr(diffusers, cls_name)
    gen = torch.Generator().manual_seed(0)
    if name not in MODELS:
        return _scheduler(cls, torch, gen)
    config, inputs = MODELS[name]
    n_params = count_params(lambda: cls(**config))
    if n_params > MAX_PARAMS:
        raise Skip(f"too large: {n_params} parameters")
    model = cls(**config).eval()
    return Case(fn=model, calls=[((), inputs(b, torch, gen)) for b in BATCHES], module=model, params=n_params)


def _scheduler(cls, torch, gen):
    scheduler = cls()
    try:
        scheduler.set_timesteps(STEPS)
    except Exception as exc:     # noqa: BLE001 - e.g. a scheduler that wants sigmas or a device
        raise Skip("set_timesteps: " + str(exc).splitlines()[0][:200]) from None
    sample = torch.randn(*LATENT, generator=gen)
    calls = [((), dict(model_output=torch.randn(*LATENT, generator=gen), timestep=scheduler.timesteps[i],
                       sample=sample)) for i in range(2)]
    return Case(fn=scheduler.step, calls=calls, reset=lambda: scheduler.set_timesteps(STEPS))
