import math
import random
from typing import Optional, Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F


def _get_sinc_resample_kernel(orig_freq: int, new_freq: int, gcd: int, lowpass_filter_width: int = 6,
                              rolloff: float = 0.99, dtype: Optional[torch.dtype] = None):
    orig_freq = int(orig_freq) // gcd
    new_freq = int(new_freq) // gcd
    base_freq = min(orig_freq, new_freq)
    base_freq *= rolloff
    width = math.ceil(lowpass_filter_width * orig_freq / base_freq)
    idx = torch.arange(-width, width + orig_freq, dtype=torch.float64)[None, None] / orig_freq
    t = torch.arange(0, -new_freq, -1, dtype=torch.float64)[:, None, None] / new_freq + idx
    t *= base_freq
    t = t.clamp_(-lowpass_filter_width, lowpass_filter_width)
    window = torch.cos(t * math.pi / lowpass_filter_width / 2) ** 2
    t *= math.pi
    scale = base_freq / orig_freq
    kernels = torch.where(t == 0, torch.tensor(1.0).to(t), t.sin() / t)
    kernels *= window * scale
    if dtype is None:
        dtype = torch.float32
    return kernels.to(dtype=dtype), width


def _apply_sinc_resample_kernel(waveform, orig_freq: int, new_freq: int, gcd: int, kernel, width: int):
    orig_freq = int(orig_freq) // gcd
    new_freq = int(new_freq) // gcd
    shape = waveform.size()
    waveform = waveform.view(-1, shape[-1])
    num_wavs, length = waveform.shape
    waveform = F.pad(waveform, (width, width + orig_freq))
    resampled = F.conv1d(waveform[:, None], kernel, stride=orig_freq)
    resampled = resampled.transpose(1, 2).reshape(num_wavs, -1)
    target_length = torch.ceil(torch.as_tensor(new_freq * length / orig_freq)).long()
    resampled = resampled[..., :target_length]
    return resampled.view(shape[:-1] + resampled.shape[-1:])


def resample(waveform, orig_freq: int, new_freq: int, lowpass_filter_width: int = 6, rolloff: float = 0.99):
    if orig_freq <= 0.0 or new_freq <= 0.0:
        raise ValueError("Original frequency and desired frequecy should be positive")
    if orig_freq == new_freq:
        return waveform
    gcd = math.gcd(int(orig_freq), int(new_freq))
    kernel, width = _get_sinc_resample_kernel(orig_freq, new_freq, gcd, lowpass_filter_width, rolloff, waveform.dtype)
    return _apply_sinc_resample_kernel(waveform, orig_freq, new_freq, gcd, kernel, width)


def mask_along_axis_iid(specgrams, mask_param: int, mask_value: float, axis: int, p: float = 1.0):
    dim = specgrams.dim()
    if axis not in [dim - 2, dim - 1]:
        raise ValueError(f"Only Frequency and Time masking are supported (axis {dim-2} and axis {dim-1} supported; {axis} given).")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"The value of p must be between 0.0 and 1.0 ({p} given).")
    mask_param = min(mask_param, int(specgrams.shape[axis] * p))
    if mask_param < 1:
        return specgrams
    device, dtype = specgrams.device, specgrams.dtype
    value = torch.rand(specgrams.shape[: (dim - 2)], device=device, dtype=dtype) * mask_param
    min_value = torch.rand(specgrams.shape[: (dim - 2)], device=device, dtype=dtype) * (specgrams.size(axis) - value)
    mask_start = min_value.long()[..., None, None]
    mask_end = (min_value.long() + value.long())[..., None, None]
    mask = torch.arange(0, specgrams.size(axis), device=device, dtype=dtype)
    specgrams = specgrams.transpose(axis, -1)
    specgrams = specgrams.masked_fill((mask >= mask_start) & (mask < mask_end), mask_value)
    return specgrams.transpose(axis, -1)


class SpeechAugment(nn.Module):
    def __init__(self, target_sample_rate: int = 16000, speeds: Sequence[float] = (0.9, 1.0, 1.1),
                 snr_range=(10.0, 30.0), time_mask_param: int = 8, freq_mask_param: int = 4, n_fft: int = 128):
        super().__init__()
        self.target_sample_rate = target_sample_rate
        self.speeds = list(speeds)
        self.snr_range = snr_range
        self.time_mask_param = time_mask_param
        self.freq_mask_param = freq_mask_param
        self.n_fft = n_fft
        self.register_buffer("window", torch.hann_window(n_fft))

    def add_noise(self, waveform, snr_db: float):
        noise = torch.randn_like(waveform)
        energy_signal = waveform.pow(2).mean(-1, keepdim=True)
        energy_noise = noise.pow(2).mean(-1, keepdim=True)
        scale = torch.sqrt(energy_signal / (energy_noise * 10 ** (snr_db / 10)))
        return waveform + scale * noise

    @torch.compile
    def forward(self, waveform: torch.Tensor, sample_rate: int) -> torch.Tensor:
        waveform = resample(waveform, sample_rate, self.target_sample_rate)
        if self.training:
            speed = random.choice(self.speeds)
            if speed != 1.0:
                waveform = resample(waveform, int(self.target_sample_rate * speed), self.target_sample_rate)
            waveform = self.add_noise(waveform, random.uniform(*self.snr_range))
        spec = torch.stft(waveform, self.n_fft, hop_length=self.n_fft // 2, window=self.window, return_complex=True).abs()
        spec = torch.log1p(spec)
        if self.training:
            spec = mask_along_axis_iid(spec[:, None], self.time_mask_param, 0.0, 3)[:, 0]
            spec = mask_along_axis_iid(spec[:, None], self.freq_mask_param, 0.0, 2)[:, 0]
        return spec


def main():
    random.seed(0)
    torch.manual_seed(0)
    augment = SpeechAugment()
    augment.train()
    batch = torch.randn(2, 3200)
    out = augment(batch, 16000)
    out = augment(torch.randn(2, 1600), 8000)
    augment.eval()
    return augment(torch.randn(2, 3200), 16000)


if __name__ == "__main__":
    main()
