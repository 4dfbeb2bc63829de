"""Log-mel speech front end with SpecAugment, in the style of ESPnet / torchaudio recipes."""
import math
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


def mel_filterbank(n_fft, n_mels, sample_rate, fmin=0.0, fmax=None):
    fmax = fmax or sample_rate / 2
    def hz_to_mel(f):
        return 2595.0 * math.log10(1.0 + f / 700.0)
    mels = torch.linspace(hz_to_mel(fmin), hz_to_mel(fmax), n_mels + 2)
    hz = 700.0 * (10 ** (mels / 2595.0) - 1.0)
    bins = torch.floor((n_fft + 1) * hz / sample_rate).long()
    fb = torch.zeros(n_mels, n_fft // 2 + 1)
    for m in range(1, n_mels + 1):
        lo, c, hi = bins[m - 1].item(), bins[m].item(), bins[m + 1].item()
        for k in range(lo, c):
            fb[m - 1, k] = (k - lo) / max(c - lo, 1)
        for k in range(c, hi):
            fb[m - 1, k] = (hi - k) / max(hi - c, 1)
    return fb


class SpecAugment(nn.Module):
    def __init__(self, freq_mask=8, time_mask=20, p=1.0):
        super().__init__()
        self.freq_mask = freq_mask
        self.time_mask = time_mask
        self.p = p

    def forward(self, spec):
        if not self.training or random.random() > self.p:
            return spec
        b, t, f = spec.shape
        width = random.randint(0, self.freq_mask)
        start = random.randint(0, f - width)
        spec = spec.clone()
        spec[:, :, start:start + width] = 0.0
        width = random.randint(0, min(self.time_mask, t // 5))
        start = random.randint(0, t - width)
        spec[:, start:start + width, :] = 0.0
        return spec


class LogMelFrontend(nn.Module):
    def __init__(self, sample_rate=16000, n_fft=400, hop=160, n_mels=40):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))
        self.register_buffer("fb", mel_filterbank(n_fft, n_mels, sample_rate))
        self.specaug = SpecAugment()
        self.num_utts = 0

    def forward(self, wav, wav_lens):
        spec = torch.stft(wav, self.n_fft, self.hop, window=self.window, return_complex=True)
        power = spec.abs().pow(2).transpose(1, 2)
        mel = torch.matmul(power, self.fb.t())
        logmel = torch.log(mel.clamp(min=1e-10))
        frame_lens = torch.div(wav_lens, self.hop, rounding_mode="floor") + 1
        mask = torch.arange(logmel.size(1))[None, :] < frame_lens[:, None]
        mean = (logmel * mask[..., None]).sum(1, keepdim=True) / frame_lens[:, None, None]
        logmel = (logmel - mean) * mask[..., None]
        logmel = self.specaug(logmel)
        self.num_utts += wav.size(0)
        return logmel, frame_lens


def main():
    torch.manual_seed(0)
    random.seed(0)
    fe = LogMelFrontend()
    fe.train()
    compiled = torch.compile(fe)
    for n in (8000, 9600, 12000):
        wav = torch.randn(2, n)
        lens = torch.tensor([n, n - 800])
        feats, flens = compiled(wav, lens)
    fe.eval()
    feats, _ = compiled(torch.randn(2, 8000), torch.tensor([8000, 8000]))
    return feats.shape


if __name__ == "__main__":
    print(main())
