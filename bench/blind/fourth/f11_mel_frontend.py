import math
from typing import Optional

import torch
import torch.nn as nn


def _hz_to_mel(freq: float, mel_scale: str = "htk") -> float:
    if mel_scale == "htk":
        return 2595.0 * math.log10(1.0 + (freq / 700.0))
    f_min = 0.0
    f_sp = 200.0 / 3
    mels = (freq - f_min) / f_sp
    min_log_hz = 1000.0
    min_log_mel = (min_log_hz - f_min) / f_sp
    logstep = math.log(6.4) / 27.0
    if freq >= min_log_hz:
        mels = min_log_mel + math.log(freq / min_log_hz) / logstep
    return mels


def _mel_to_hz(mels: torch.Tensor, mel_scale: str = "htk") -> torch.Tensor:
    if mel_scale == "htk":
        return 700.0 * (10.0 ** (mels / 2595.0) - 1.0)
    f_min = 0.0
    f_sp = 200.0 / 3
    freqs = f_min + f_sp * mels
    min_log_hz = 1000.0
    min_log_mel = (min_log_hz - f_min) / f_sp
    logstep = math.log(6.4) / 27.0
    log_t = mels >= min_log_mel
    freqs[log_t] = min_log_hz * torch.exp(logstep * (mels[log_t] - min_log_mel))
    return freqs


def melscale_fbanks(n_freqs: int, f_min: float, f_max: float, n_mels: int, sample_rate: int,
                    norm: Optional[str] = None, mel_scale: str = "htk") -> torch.Tensor:
    all_freqs = torch.linspace(0, sample_rate // 2, n_freqs)
    m_min = _hz_to_mel(f_min, mel_scale=mel_scale)
    m_max = _hz_to_mel(f_max, mel_scale=mel_scale)
    m_pts = torch.linspace(m_min, m_max, n_mels + 2)
    f_pts = _mel_to_hz(m_pts, mel_scale=mel_scale)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts.unsqueeze(0) - all_freqs.unsqueeze(1)
    zero = torch.zeros(1)
    down_slopes = (-1.0 * slopes[:, :-2]) / f_diff[:-1]
    up_slopes = slopes[:, 2:] / f_diff[1:]
    fb = torch.max(zero, torch.min(down_slopes, up_slopes))
    if norm is not None and norm == "slaney":
        enorm = 2.0 / (f_pts[2 : n_mels + 2] - f_pts[:n_mels])
        fb *= enorm.unsqueeze(0)
    return fb


class Spectrogram(nn.Module):
    def __init__(self, n_fft=256, win_length=None, hop_length=None, power: Optional[float] = 2.0,
                 window_fn=torch.hann_window, center=True, pad_mode="reflect", normalized=False):
        super().__init__()
        self.n_fft = n_fft
        self.win_length = win_length if win_length is not None else n_fft
        self.hop_length = hop_length if hop_length is not None else self.win_length // 2
        self.register_buffer("window", window_fn(self.win_length))
        self.power = power
        self.center = center
        self.pad_mode = pad_mode
        self.normalized = normalized

    def forward(self, waveform: torch.Tensor) -> torch.Tensor:
        shape = waveform.size()
        waveform = waveform.reshape(-1, shape[-1])
        spec_f = torch.stft(waveform, n_fft=self.n_fft, hop_length=self.hop_length, win_length=self.win_length,
                            window=self.window, center=self.center, pad_mode=self.pad_mode,
                            normalized=self.normalized, onesided=True, return_complex=True)
        spec_f = spec_f.reshape(shape[:-1] + spec_f.shape[-2:])
        if self.power is not None:
            if self.power == 1.0:
                return spec_f.abs()
            return spec_f.abs().pow(self.power)
        return spec_f


class MelScale(nn.Module):
    def __init__(self, n_mels=40, sample_rate=16000, f_min=0.0, f_max=None, n_stft=129, norm=None, mel_scale="htk"):
        super().__init__()
        f_max = f_max if f_max is not None else float(sample_rate // 2)
        fb = melscale_fbanks(n_stft, f_min, f_max, n_mels, sample_rate, norm, mel_scale)
        self.register_buffer("fb", fb)

    def forward(self, specgram: torch.Tensor) -> torch.Tensor:
        return torch.matmul(specgram.transpose(-1, -2), self.fb).transpose(-1, -2)


class AmplitudeToDB(nn.Module):
    def __init__(self, stype: str = "power", top_db: Optional[float] = None):
        super().__init__()
        self.stype = stype
        self.top_db = top_db
        self.multiplier = 10.0 if stype == "power" else 20.0
        self.amin = 1e-10
        self.ref_value = 1.0
        self.db_multiplier = math.log10(max(self.amin, self.ref_value))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x_db = self.multiplier * torch.log10(torch.clamp(x, min=self.amin))
        x_db -= self.multiplier * self.db_multiplier
        if self.top_db is not None:
            shape = x_db.size()
            packed_channels = shape[-3] if x_db.dim() > 2 else 1
            x_db = x_db.reshape(-1, packed_channels, shape[-2], shape[-1])
            x_db = torch.max(x_db, (x_db.amax(dim=(-3, -2, -1)) - self.top_db).view(-1, 1, 1, 1))
            x_db = x_db.reshape(shape)
        return x_db


class LogMelFrontend(nn.Module):
    def __init__(self, sample_rate=16000, n_fft=256, hop_length=128, n_mels=40, top_db=80.0, normalize=True):
        super().__init__()
        self.spectrogram = Spectrogram(n_fft=n_fft, hop_length=hop_length)
        self.mel_scale = MelScale(n_mels, sample_rate, n_stft=n_fft // 2 + 1, norm="slaney", mel_scale="slaney")
        self.to_db = AmplitudeToDB("power", top_db=top_db)
        self.normalize = normalize

    def forward(self, waveform: torch.Tensor) -> torch.Tensor:
        if waveform.dim() == 1:
            waveform = waveform.unsqueeze(0)
        mel = self.mel_scale(self.spectrogram(waveform))
        feats = self.to_db(mel)
        if self.normalize:
            mean = feats.mean(dim=-1, keepdim=True)
            std = feats.std(dim=-1, keepdim=True)
            feats = (feats - mean) / (std + 1e-5)
        return feats


def main():
    torch.manual_seed(0)
    frontend = torch.compile(LogMelFrontend().eval())
    with torch.no_grad():
        for _ in range(3):
            wav = torch.randn(2, 1, 4000) * 0.1
            feats = frontend(wav)
    return feats


if __name__ == "__main__":
    main()
