"""ESPnet-style speech front end: STFT -> log-mel fbank -> utterance MVN -> conv2d subsampling."""
import math
import random

import numpy as np
import torch
import torch.nn as nn


def make_pad_mask(lengths, xs=None, length_dim=-1, maxlen=None):
    """espnet.nets.pytorch_backend.nets_utils.make_pad_mask (simplified)."""
    if not isinstance(lengths, list):
        lengths = lengths.long().tolist()
    bs = int(len(lengths))
    if maxlen is None:
        if xs is None:
            maxlen = int(max(lengths))
        else:
            maxlen = xs.size(length_dim)
    seq_range = torch.arange(0, maxlen, dtype=torch.int64)
    seq_range_expand = seq_range.unsqueeze(0).expand(bs, maxlen)
    seq_length_expand = seq_range_expand.new_tensor(lengths).unsqueeze(-1)
    return seq_range_expand >= seq_length_expand


def mel_filterbank(sr, n_fft, n_mels, fmin=0.0, fmax=None):
    fmax = fmax or sr / 2
    hz2mel = lambda f: 2595.0 * np.log10(1.0 + f / 700.0)
    mel2hz = lambda m: 700.0 * (10.0 ** (m / 2595.0) - 1.0)
    mels = np.linspace(hz2mel(fmin), hz2mel(fmax), n_mels + 2)
    bins = np.floor((n_fft + 1) * mel2hz(mels) / sr).astype(int)
    fb = np.zeros((n_mels, n_fft // 2 + 1), dtype=np.float32)
    for m in range(1, n_mels + 1):
        l, c, r = bins[m - 1], bins[m], bins[m + 1]
        for k in range(l, c):
            fb[m - 1, k] = (k - l) / max(c - l, 1)
        for k in range(c, r):
            fb[m - 1, k] = (r - k) / max(r - c, 1)
    return torch.from_numpy(fb)


class DefaultFrontend(nn.Module):
    def __init__(self, fs=8000, n_fft=128, hop_length=32, n_mels=20):
        super().__init__()
        self.n_fft, self.hop_length = n_fft, hop_length
        self.register_buffer("window", torch.hann_window(n_fft), persistent=False)
        self.register_buffer("melmat", mel_filterbank(fs, n_fft, n_mels).T, persistent=False)

    def forward(self, speech, speech_lengths):
        spec = torch.stft(speech, self.n_fft, self.hop_length, window=self.window, center=True,
                          return_complex=True)
        power = spec.real ** 2 + spec.imag ** 2
        feats = torch.clamp(power.transpose(1, 2) @ self.melmat, min=1e-10).log()
        feats_lens = torch.div(speech_lengths, self.hop_length, rounding_mode="floor") + 1
        feats = feats.masked_fill(make_pad_mask(feats_lens, feats, 1).unsqueeze(-1), 0.0)
        return feats, feats_lens


class UtteranceMVN(nn.Module):
    def __init__(self, norm_means=True, norm_vars=False, eps=1e-20):
        super().__init__()
        self.norm_means, self.norm_vars, self.eps = norm_means, norm_vars, eps

    def forward(self, x, ilens):
        mask = make_pad_mask(ilens, x, 1).unsqueeze(-1)
        x = x.masked_fill(mask, 0.0)
        mean = x.sum(dim=1, keepdim=True) / ilens[:, None, None]
        if self.norm_means:
            x = x - mean
            x = x.masked_fill(mask, 0.0)
        if self.norm_vars:
            var = (x ** 2).sum(dim=1, keepdim=True) / ilens[:, None, None]
            x = x / torch.sqrt(torch.clamp(var, min=self.eps))
        return x, ilens


class Conv2dSubsampling(nn.Module):
    def __init__(self, idim, odim):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, odim, 3, 2), nn.ReLU(), nn.Conv2d(odim, odim, 3, 2), nn.ReLU())
        self.out = nn.Linear(odim * (((idim - 1) // 2 - 1) // 2), odim)

    def forward(self, x, ilens):
        x = self.conv(x.unsqueeze(1))
        b, c, t, f = x.size()
        x = self.out(x.transpose(1, 2).contiguous().view(b, t, c * f))
        olens = ((ilens - 1) // 2 - 1) // 2
        return x, olens


class SpeechEncoderFrontend(nn.Module):
    def __init__(self, n_mels=20, odim=16):
        super().__init__()
        self.frontend = DefaultFrontend(n_mels=n_mels)
        self.normalize = UtteranceMVN()
        self.embed = Conv2dSubsampling(n_mels, odim)

    def forward(self, speech, speech_lengths):
        feats, lens = self.frontend(speech, speech_lengths)
        feats, lens = self.normalize(feats, lens)
        return self.embed(feats, lens)


def main():
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    enc = SpeechEncoderFrontend().eval()
    enc_c = torch.compile(enc)
    out_frames = 0
    with torch.no_grad():
        for batch in range(4):
            lengths = torch.tensor(sorted([random.randint(900, 1600) for _ in range(3)], reverse=True))
            speech = torch.randn(3, int(lengths[0]))
            speech = speech * (torch.arange(speech.shape[1])[None] < lengths[:, None])
            x, olens = enc_c(speech, lengths)
            out_frames += int(olens.sum())
    return out_frames


if __name__ == "__main__":
    print(main())
