"""torchaudio: the model classes of `torchaudio.models` built small through their own constructors (their
factory functions fix full sizes), random weights, eval and train, a batch of waveforms (or features) whose
length changes between the two calls."""
from . import MODES, Case, Skip, count_params

PACKAGE = "torchaudio"
MAX_PARAMS = 50_000_000              # Wav2Letter's layers are fixed (26 M on waveforms)
LENGTHS = (1600, 2400)               # samples (features: frames / 20)


def _wav2vec2(m):
    return m.wav2vec2_model(
        extractor_mode="group_norm", extractor_conv_layer_config=[(32, 10, 5), (32, 3, 2), (32, 2, 2)],
        extractor_conv_bias=False, encoder_embed_dim=32, encoder_projection_dropout=0.0, encoder_pos_conv_kernel=16,
        encoder_pos_conv_groups=2, encoder_num_layers=2, encoder_num_heads=4, encoder_attention_dropout=0.0,
        encoder_ff_interm_features=64, encoder_ff_interm_dropout=0.0, encoder_dropout=0.0,
        encoder_layer_norm_first=False, encoder_layer_drop=0.0, aux_num_out=10)


def _wave(b, n, t, g):
    return ((t.randn(b, n, generator=g),), {})


def _feats(dim):
    return lambda b, n, t, g: ((t.randn(b, n // 20, dim, generator=g), t.full((b,), n // 20)), {})


# name -> (build(torchaudio.models), inputs(batch, length, torch, gen) -> (args, kwargs))
MODELS = {
    "wav2vec2": (_wav2vec2, _wave),
    "conv_tasnet": (lambda m: m.ConvTasNet(num_sources=2, enc_kernel_size=16, enc_num_feats=32, msk_kernel_size=3,
                                           msk_num_feats=16, msk_num_hidden_feats=32, msk_num_layers=2,
                                           msk_num_stacks=1), lambda b, n, t, g: ((t.randn(b, 1, n, generator=g),), {})),
    "wav2letter": (lambda m: m.Wav2Letter(num_classes=10, input_type="waveform", num_features=1),
                   lambda b, n, t, g: ((t.randn(b, 1, n, generator=g),), {})),
    "deepspeech": (lambda m: m.DeepSpeech(n_feature=16, n_hidden=32, n_class=10),
                   lambda b, n, t, g: ((t.randn(b, 1, n // 20, 16, generator=g),), {})),
    "conformer": (lambda m: m.Conformer(input_dim=32, num_heads=4, ffn_dim=64, num_layers=2,
                                        depthwise_conv_kernel_size=3), _feats(32)),
    "emformer": (lambda m: m.Emformer(input_dim=32, num_heads=4, ffn_dim=64, num_layers=2, segment_length=4,
                                      right_context_length=1),
                 lambda b, n, t, g: ((t.randn(b, n // 20 + 1, 32, generator=g), t.full((b,), n // 20 + 1)), {})),
    "wavernn": (lambda m: m.WaveRNN(upsample_scales=[2, 2], n_classes=16, hop_length=4, n_res_block=1, n_rnn=16,
                                    n_fc=16, kernel_size=5, n_freq=8, n_hidden=16, n_output=16),
                lambda b, n, t, g: ((t.randn(b, 1, (n // 100 - 4) * 4, generator=g),
                                     t.randn(b, 1, 8, n // 100, generator=g)), {})),
    "tacotron2": (lambda m: m.Tacotron2(n_symbol=20, n_mels=16, encoder_embedding_dim=512, encoder_n_convolution=1,
                                        encoder_kernel_size=3, decoder_rnn_dim=32, decoder_max_step=20,
                                        attention_rnn_dim=32, attention_hidden_dim=16, attention_location_n_filter=4,
                                        attention_location_kernel_size=3, prenet_dim=16, postnet_n_convolution=1,
                                        postnet_kernel_size=3, postnet_embedding_dim=16),
                  lambda b, n, t, g: ((t.randint(1, 20, (b, n // 200), generator=g), t.full((b,), n // 200),
                                       t.randn(b, 16, n // 100, generator=g), t.full((b,), n // 100)), {})),
    "hdemucs": (lambda m: m.HDemucs(sources=["a", "b"], channels=8, growth=2, depth=2, nfft=256),
                lambda b, n, t, g: ((t.randn(b, 2, n * 2, generator=g),), {})),
    "rnnt": (lambda m: m.emformer_rnnt_model(input_dim=16, encoding_dim=16, num_symbols=10, segment_length=4,
                                             right_context_length=1, time_reduction_input_dim=32, time_reduction_stride=2,
                                             transformer_num_heads=2, transformer_ffn_dim=32, transformer_num_layers=2,
                                             transformer_dropout=0.0, transformer_activation="relu",
                                             transformer_left_context_length=8, transformer_max_memory_size=0,
                                             transformer_weight_init_scale_strategy="depthwise",
                                             transformer_tanh_on_mem=True, symbol_embedding_dim=16, num_lstm_layers=1,
                                             lstm_layer_norm=True, lstm_layer_norm_epsilon=1e-5, lstm_dropout=0.0),
             lambda b, n, t, g: ((t.randn(b, n // 20 + 1, 16, generator=g), t.full((b,), n // 20 + 1),
                                  t.randint(0, 10, (b, 3), generator=g), t.full((b,), 3)), {})),
}


def versions():
    import torchaudio

    return {"torchaudio": torchaudio.__version__}


def jobs(sample=False):
    return [(name, name, MODES) for name in MODELS]


def build(name, cls_name, mode):
    import torch
    import torchaudio.models as m

    make, inputs = MODELS[name]
    n_params = count_params(lambda: make(m))
    if n_params > MAX_PARAMS:
        raise Skip(f"too large: {n_params} parameters")
    model = make(m).eval()
    gen = torch.Generator().manual_seed(0)
    return Case(fn=model, calls=[inputs(2, n, torch, gen) for n in LENGTHS], module=model, params=n_params)
