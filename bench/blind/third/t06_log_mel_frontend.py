"""Speech front end: pre-emphasis, STFT, mel filterbank (built with numpy once), log compression, per-utterance CMVN."""
import math

import numpy as np
import torch
import torch.nn as nn


def hz_to_mel(f):
    return 2595.0 * np.log10(1.0 + f / 700.0)


def mel_to_hz(m):
    return 700.0 * (10 ** (m / 2595.0) - 1.0)


def mel_filterbank(n_mels, n_fft, sample_rate, f_min=0.0, f_max=None):
    f_max = f_max or sample_rate / 2
    mels = np.linspace(hz_to_mel(f_min), hz_to_mel(f_max), n_mels + 2)
    hz = mel_to_hz(mels)
    bins = np.floor((n_fft + 1) * hz / sample_rate).astype(int)
    fb = np.zeros((n_mels, n_fft // 2 + 1), dtype=np.float32)
    for m in range(1, n_mels + 1):
        l, c, r = bins[m - 1], bins[m], bins[m + 1]
        for k in range(l, c):
            fb[m - 1, k] = (k - l) / max(c - l, 1)
        for k in range(c, r):
            fb[m - 1, k] = (r - k) / max(r - c, 1)
    return torch.from_numpy(fb)


class LogMelFrontend(nn.Module):
    def __init__(self, sample_rate=16000, n_fft=256, hop=128, n_mels=20, preemph=0.97):
        super().__init__()
        self.n_fft = n_fft
        self.hop = hop
        self.preemph = preemph
        self.register_buffer("window", torch.hann_window(n_fft))
        self.register_buffer("fb", mel_filterbank(n_mels, n_fft, sample_rate))

    def forward(self, wav, lengths):
        wav = torch.cat([wav[:, :1], wav[:, 1:] - self.preemph * wav[:, :-1]], dim=1)
        spec = torch.stft(wav, self.n_fft, self.hop, window=self.window, return_complex=True)
        power = spec.abs().pow(2)
        mel = torch.matmul(self.fb, power)
        logmel = torch.log(mel.clamp(min=1e-10))
        frames = (lengths // self.hop + 1).tolist()
        out = torch.zeros_like(logmel)
        for i, n in enumerate(frames):
            seg = logmel[i, :, :n]
            out[i, :, :n] = (seg - seg.mean(dim=-1, keepdim=True)) / (seg.std(dim=-1, keepdim=True) + 1e-5)
        return out, torch.tensor(frames)


def main():
    torch.manual_seed(0)
    frontend = LogMelFrontend()
    fe = torch.compile(frontend, backend="eager")
    for lens in ((4000, 3200), (4800, 4800, 2400)):
        t = max(lens)
        wav = torch.randn(len(lens), t) * 0.1
        lengths = torch.tensor(lens)
        feats, n_frames = fe(wav, lengths)
        assert feats.shape[-1] == int(math.floor(t / 128)) + 1
