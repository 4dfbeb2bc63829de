"""Waveform augmentation chain (gain, noise at random SNR, polarity) run inside a compiled speaker-embedding model."""
import random

import numpy as np
import torch
import torch.nn as nn


class AugmentChain(nn.Module):
    def __init__(self, p_gain=0.5, snr_range=(5.0, 20.0), p_polarity=0.5):
        super().__init__()
        self.p_gain, self.snr_range, self.p_polarity = p_gain, snr_range, p_polarity

    def add_noise(self, wav, snr_db):
        noise = torch.randn_like(wav)
        sig_pow = wav.pow(2).mean(-1, keepdim=True)
        noise_pow = noise.pow(2).mean(-1, keepdim=True)
        scale = torch.sqrt(sig_pow / (noise_pow * 10 ** (snr_db / 10)))
        return wav + scale * noise

    def forward(self, wav):
        peaks = wav.abs().amax(-1)
        gains = [min(1.0 / float(p), 4.0) for p in peaks]
        wav = wav * torch.tensor(gains)[:, None]
        snrs = torch.empty(wav.size(0)).uniform_(*self.snr_range)
        wav = self.add_noise(wav, snrs[:, None])
        if random.random() < self.p_polarity:
            wav = -wav
        return wav


class XVector(nn.Module):
    def __init__(self, d=16, emb=8, augment=True):
        super().__init__()
        self.augment = AugmentChain() if augment else None
        self.frames = nn.Sequential(nn.Conv1d(1, d, 16, stride=8), nn.ReLU(), nn.Conv1d(d, d, 3, dilation=2), nn.ReLU())
        self.emb = nn.Linear(2 * d, emb)

    def stats_pool(self, h):
        mean = h.mean(-1)
        std = h.var(-1).clamp(min=1e-5).sqrt()
        return torch.cat([mean, std], -1)

    def forward(self, wav):
        if self.training and self.augment is not None:
            wav = self.augment(wav)
        if isinstance(wav, np.ndarray):
            wav = torch.from_numpy(wav)
        h = self.frames(wav[:, None])
        e = self.emb(self.stats_pool(h))
        norms = e.norm(dim=-1).tolist()
        if max(norms) > 100:
            raise ValueError(f"embedding exploded: {e}")
        return e


def main():
    torch.manual_seed(0)
    random.seed(1)
    model = XVector()
    model.compile()
    for n in (800, 800, 1200):
        e = model(torch.randn(3, n))
        e.sum().backward()
    return e.shape


if __name__ == "__main__":
    print(main())
