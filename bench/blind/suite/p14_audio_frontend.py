"""Speech front end: log-mel features with per-utterance normalisation, silence trimming, and timing."""
import math
import time

import torch
import torch.nn as nn


def mel_filterbank(n_mels, n_freqs):
    centers = torch.linspace(0, n_freqs - 1, n_mels + 2)
    bins = torch.arange(n_freqs).float()
    fb = torch.zeros(n_mels, n_freqs)
    for m in range(1, n_mels + 1):
        left, c, right = centers[m - 1], centers[m], centers[m + 1]
        up = (bins - left) / (c - left)
        down = (right - bins) / (right - c)
        fb[m - 1] = torch.clamp(torch.minimum(up, down), min=0)
    return fb


class LogMel(nn.Module):
    def __init__(self, n_fft=64, hop=16, n_mels=8):
        super().__init__()
        self.n_fft = n_fft
        self.hop = hop
        self.register_buffer("window", torch.hann_window(n_fft))
        self.register_buffer("fb", mel_filterbank(n_mels, n_fft // 2 + 1))

    def forward(self, wav):
        if wav.dim() == 1:
            wav = wav.unsqueeze(0)
        spec = torch.stft(wav, self.n_fft, self.hop, window=self.window, return_complex=True)
        power = spec.abs().pow(2)
        mel = torch.log(torch.matmul(self.fb, power).clamp_min(1e-10))
        std = mel.std()
        if std > 1e-5:
            mel = (mel - mel.mean()) / std
        return mel


def trim_silence(wav, threshold):
    loud = (wav.abs() > threshold).nonzero()
    start = loud[0].item()
    end = loud[-1].item() + 1
    return wav[start:end]


class Featurizer:
    def __init__(self):
        self.logmel = LogMel()
        self.last_ms = 0.0

    def __call__(self, wav):
        t0 = time.time()
        feats = self.logmel(wav)
        frames = math.ceil(wav.shape[-1] / self.logmel.hop)
        self.last_ms = (time.time() - t0) * 1000.0
        return feats, frames


def main():
    torch.manual_seed(0)
    fz = Featurizer()
    fz.logmel.compile(backend="eager")
    fz(torch.randn(800))
    fz(torch.randn(2, 960))

    trim = torch.compile(trim_silence, backend="eager")
    w = torch.cat([torch.zeros(50), torch.randn(200), torch.zeros(30)])
    trim(w, 0.01)
    trim(torch.cat([torch.zeros(10), torch.randn(100)]), 0.01)

    call = torch.compile(fz.__call__, backend="eager")
    call(torch.randn(640))
    call(torch.randn(640))
