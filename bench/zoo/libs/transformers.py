"""transformers: for every model type of CONFIG_MAPPING_NAMES one class (the causal-LM head where there is one),
built from its config with small values, fed input_ids / pixel_values / input_values from the forward signature."""
import inspect

from . import MAX_PARAMS, MODES, Case, Skip, count_params, short_error

PACKAGE = "transformers"

# Small-config values, after transformers' own model testers; only the attributes a config has are set.
# Sizes are multiples of 16 bytes in float32 (grouped_mm in the MoE layers refuses 37).
SMALL = {
    "vocab_size": 99, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "intermediate_size": 64, "max_position_embeddings": 64, "head_dim": 8,
    "type_vocab_size": 2,
    # encoder-decoder (bart, t5, ...)
    "d_model": 32, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4,
    "decoder_attention_heads": 4, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64, "num_layers": 2,
    "num_decoder_layers": 2, "num_heads": 4, "d_ff": 64, "d_kv": 8,
    # gpt2-style names
    "n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 64, "n_ctx": 64,
    # mixture of experts: few experts so the tiny model stays tiny
    "num_experts": 4, "num_local_experts": 4, "n_routed_experts": 4, "num_experts_per_tok": 2,
    "moe_intermediate_size": 16, "shared_expert_intermediate_size": 16,
    # vision
    "image_size": 32, "patch_size": 4, "num_channels": 3,
    # audio (wav2vec2-style conv feature extractor)
    "conv_dim": [32, 32, 32], "conv_stride": [4, 4, 4], "conv_kernel": [8, 8, 8],
    "num_conv_pos_embeddings": 16, "num_conv_pos_embedding_groups": 2,
}
TEXT_SHAPES = ((2, 8), (2, 12))      # (batch, seq): the second shape shows the recompiles
VISION_BATCHES = (2, 3)              # image models change the batch (a fixed 32x32 image)
AUDIO_SHAPES = ((2, 1024), (2, 1536))
# Inputs this script can build; a forward that requires anything else is skipped.
# Special token ids that no longer fit the small vocabulary are moved into it.
TOKEN_IDS = {"pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2, "decoder_start_token_id": 0,
             "sep_token_id": 2, "cls_token_id": 0, "image_token_id": 98, "image_token_index": 98}
BUILDABLE = {"input_ids", "attention_mask", "decoder_input_ids", "pixel_values", "input_values", "labels"}


def versions():
    import transformers

    return {"transformers": transformers.__version__}


def jobs(sample=False):
    """Every model type (`sample` changes nothing: each type is one or two classes already)."""
    return [(model_type, cls, MODES) for model_type, classes in model_classes().items() for cls in classes]


def model_classes():
    """{model_type: [class names]}: the causal-LM head where there is one, else the base model, else any head;
    for an encoder-decoder model type whose causal-LM head is its decoder alone (BartForCausalLM), also the
    base model, which runs the encoder-decoder path (cross-attention, its caches) that head never does."""
    from transformers.models.auto import configuration_auto, modeling_auto

    mappings = [modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, modeling_auto.MODEL_MAPPING_NAMES]
    mappings += [getattr(modeling_auto, n) for n in sorted(dir(modeling_auto))
                 if n.startswith("MODEL_FOR_") and n.endswith("_MAPPING_NAMES")]
    chosen = {}
    for model_type in sorted(configuration_auto.CONFIG_MAPPING_NAMES):
        for mapping in mappings:
            name = mapping.get(model_type)
            if name:
                chosen[model_type] = [name if isinstance(name, str) else name[0]]
                break
        else:
            chosen[model_type] = [None]
        base = modeling_auto.MODEL_MAPPING_NAMES.get(model_type)
        base = base if isinstance(base, str) or base is None else base[0]
        if chosen[model_type][0] in modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.values() and base and \
                base != chosen[model_type][0] and _encoder_decoder(model_type):
            chosen[model_type].append(base)
    return chosen


def _encoder_decoder(model_type) -> bool:
    from transformers.models.auto import configuration_auto

    try:
        config_cls = configuration_auto.CONFIG_MAPPING[model_type]
    except KeyError:
        return False
    try:
        return bool(getattr(config_cls(), "is_encoder_decoder", False))
    except Exception:                # noqa: BLE001 - a default config that does not build: its signature's default
        param = inspect.signature(config_cls.__init__).parameters.get("is_encoder_decoder")
        return bool(param is not None and param.default is True)


def make_config(config_cls):
    """The config class built with the SMALL values its default instance (and sub-configs) has."""
    def small_kwargs(cls):
        default = cls()
        have = set(default.to_dict()) | set(vars(default))
        kwargs = {k: v for k, v in SMALL.items() if k in have}
        for k, v in TOKEN_IDS.items():
            old = getattr(default, k, None)
            if isinstance(old, int) and old >= SMALL["vocab_size"]:
                kwargs[k] = v
        for name in getattr(cls, "sub_configs", None) or {}:
            # The default instance holds the concrete sub-config (the class may be an AutoConfig).
            sub = getattr(default, name, None)
            if hasattr(sub, "to_dict") and hasattr(sub, "model_type"):
                try:
                    kwargs[name] = {"model_type": sub.model_type, **small_kwargs(type(sub))}
                except Exception:
                    pass             # keep the default sub-config; MAX_PARAMS guards the size
        return kwargs

    return config_cls(**small_kwargs(config_cls))


def forward_params(model):
    sig = inspect.signature(type(model).forward)
    params = {n: p for n, p in sig.parameters.items() if n != "self"
              and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    required = [n for n, p in params.items() if p.default is p.empty]
    return params, required


def make_inputs(model, config, params, shape_index, mode):
    """Inputs for one call, or raises ValueError(reason) when this model's inputs can't be built generically."""
    import torch

    gen = torch.Generator().manual_seed(shape_index)
    kw = {}
    text_cfg = getattr(config, "get_text_config", lambda: config)()
    vocab = getattr(text_cfg, "vocab_size", None) or 99
    if "input_ids" in params:
        b, s = TEXT_SHAPES[shape_index]
        kw["input_ids"] = torch.randint(3, min(vocab, 99), (b, s), generator=gen)
        if "attention_mask" in params:
            mask = torch.ones(b, s, dtype=torch.long)
            mask[1, -2:] = 0         # one padded row: the usual batch, and the mask code paths it takes
            kw["attention_mask"] = mask
        if "decoder_input_ids" in params and getattr(config, "is_encoder_decoder", False):
            kw["decoder_input_ids"] = torch.randint(3, min(vocab, 99), (b, s), generator=gen)
        if mode == "train" and "labels" in params and type(model).__name__.endswith("ForCausalLM"):
            kw["labels"] = kw["input_ids"].clone()
    if "pixel_values" in params:
        vis_cfg = getattr(config, "vision_config", None) or config
        size = getattr(vis_cfg, "image_size", 32)
        size = size[0] if isinstance(size, (list, tuple)) else size
        channels = getattr(vis_cfg, "num_channels", 3)
        b = TEXT_SHAPES[shape_index][0] if "input_ids" in kw else VISION_BATCHES[shape_index]
        kw["pixel_values"] = torch.randn(b, channels, size, size, generator=gen)
    if not kw and "input_values" in params:
        kw["input_values"] = torch.randn(*AUDIO_SHAPES[shape_index], generator=gen)
    if not kw:
        raise ValueError("no generic input: forward takes " + ",".join(list(params)[:6]))
    return kw


def build(model_type, cls_name, mode):
    import transformers
    from transformers.models.auto import configuration_auto

    try:
        config_cls = getattr(transformers, configuration_auto.CONFIG_MAPPING_NAMES[model_type])
        model_cls = getattr(transformers, cls_name)
        config = make_config(config_cls)
    except Exception as exc:
        raise Skip("config: " + short_error(exc)) from None
    n_params = count_params(lambda: model_cls(config))
    if n_params > MAX_PARAMS:
        raise Skip(f"too large after shrinking: {n_params} parameters")
    model = model_cls(config).eval()
    params, required = forward_params(model)
    missing = [n for n in required if n not in BUILDABLE]
    if missing:
        raise Skip("needs input " + ",".join(missing))
    try:
        calls = [((), make_inputs(model, config, params, i, mode)) for i in range(2)]
    except ValueError as exc:
        raise Skip(str(exc)) from None

    def fallback(exc):
        # Image-text models want image tokens placed in input_ids: fall back to their text-only path.
        if not all("pixel_values" in kw and "input_ids" in kw for _, kw in calls):
            return None
        return [((), {k: v for k, v in kw.items() if k != "pixel_values"}) for _, kw in calls], \
            {"pixel_values": short_error(exc)}
    return Case(fn=model, calls=calls, module=model, params=n_params, fallback=fallback)
