"""Log-mel speech front end applied to utterances of different durations."""
import math

import torch
import torch.nn as nn


def hz_to_mel(f):
    return 2595.0 * math.log10(1.0 + f / 700.0)


def mel_filterbank(n_mels, n_fft, sample_rate, f_min=0.0, f_max=None):
    f_max = f_max or sample_rate / 2
    n_freqs = n_fft // 2 + 1
    mel_pts = torch.linspace(hz_to_mel(f_min), hz_to_mel(f_max), n_mels + 2)
    hz_pts = 700.0 * (10 ** (mel_pts / 2595.0) - 1.0)
    freqs = torch.linspace(0, sample_rate / 2, n_freqs)
    fb = torch.zeros(n_freqs, n_mels)
    for m in range(n_mels):
        lo, c, hi = hz_pts[m], hz_pts[m + 1], hz_pts[m + 2]
        up = (freqs - lo) / (c - lo)
        down = (hi - freqs) / (hi - c)
        fb[:, m] = torch.clamp(torch.minimum(up, down), min=0.0)
    return fb


class LogMelSpectrogram(nn.Module):
    def __init__(self, sample_rate=8000, n_fft=128, hop_length=64, n_mels=20):
        super().__init__()
        self.n_fft = n_fft
        self.hop_length = hop_length
        self.register_buffer("window", torch.hann_window(n_fft))
        self.register_buffer("fb", mel_filterbank(n_mels, n_fft, sample_rate))

    def forward(self, wav):
        pad = self.n_fft // 2
        wav = torch.nn.functional.pad(wav[:, None], (pad, pad), mode="reflect")[:, 0]
        frames = wav.unfold(-1, self.n_fft, self.hop_length) * self.window
        spec = torch.fft.rfft(frames, dim=-1).abs() ** 2
        mel = spec @ self.fb
        return torch.log(mel + 1e-6).transpose(1, 2)


class FeatureExtractor:
    def __init__(self, sample_rate=8000):
        self.sample_rate = sample_rate
        self.frontend = torch.compile(LogMelSpectrogram(sample_rate), dynamic=False)

    def __call__(self, utterances):
        feats = []
        for wav in utterances:
            wav = wav - wav.mean()
            feats.append(self.frontend(wav[None]))
        return feats


def main():
    torch.manual_seed(0)
    extractor = FeatureExtractor()
    durations = [0.5, 0.5, 0.75, 0.6, 1.0]
    utts = [torch.randn(int(d * extractor.sample_rate)) for d in durations]
    feats = extractor(utts)
    print([f.shape for f in feats])


if __name__ == "__main__":
    main()
