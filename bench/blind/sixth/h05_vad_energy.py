"""Energy + zero-crossing voice activity detector with an adaptive noise floor."""
import math

import torch
import torch.nn.functional as F

SAMPLE_RATE = 8000
FRAME_MS = 20
HOP_MS = 10


def frame_signal(wav, frame_len, hop):
    pad = (frame_len - hop) // 2
    wav = F.pad(wav, (pad, pad))
    return wav.unfold(-1, frame_len, hop)


def frame_features(wav):
    frame_len = SAMPLE_RATE * FRAME_MS // 1000
    hop = SAMPLE_RATE * HOP_MS // 1000
    frames = frame_signal(wav, frame_len, hop)
    frames = frames * torch.hann_window(frame_len)
    energy_db = 10 * torch.log10(frames.pow(2).mean(-1) + 1e-10)
    signs = torch.sign(frames)
    zcr = (signs[..., 1:] != signs[..., :-1]).float().mean(-1)
    return energy_db, zcr


def smooth(decisions, kernel):
    k = torch.ones(1, 1, kernel) / kernel
    return F.conv1d(decisions[None, None].float(), k, padding=kernel // 2)[0, 0]


@torch.compile
def detect(wav, threshold_db, opts):
    energy_db, zcr = frame_features(wav)
    voiced = (energy_db > threshold_db) & (zcr < opts["max_zcr"])
    voiced = smooth(voiced, opts["smooth"]) > 0.5
    idx = torch.nonzero(voiced).squeeze(-1)
    if idx.numel() == 0:
        return []
    gaps = torch.diff(idx) > opts["hangover"]
    starts = torch.cat([idx[:1], idx[1:][gaps]])
    ends = torch.cat([idx[:-1][gaps], idx[-1:]])
    return list(zip(starts.tolist(), ends.tolist()))


class NoiseFloorTracker:
    def __init__(self, alpha=0.9, margin_db=6.0):
        self.alpha = alpha
        self.margin_db = margin_db
        self.floor = None

    def update(self, wav):
        energy_db, _ = frame_features(wav)
        quiet = torch.quantile(energy_db, 0.1)
        self.floor = quiet if self.floor is None else self.alpha * self.floor + (1 - self.alpha) * quiet
        return float(self.floor) + self.margin_db


def synth_utterance(seconds, gen):
    n = int(seconds * SAMPLE_RATE)
    t = torch.arange(n) / SAMPLE_RATE
    wav = 0.01 * torch.randn(n, generator=gen)
    for start, dur in ((0.2, 0.3), (0.7, 0.25)):
        s, e = int(start * SAMPLE_RATE), int((start + dur) * SAMPLE_RATE)
        wav[s:e] += 0.3 * torch.sin(2 * math.pi * 220 * t[s:e])
    return wav


def main():
    gen = torch.Generator().manual_seed(0)
    tracker = NoiseFloorTracker()
    opts = {"max_zcr": 0.4, "smooth": 5, "hangover": 8}
    all_segments = []
    for _ in range(3):
        wav = synth_utterance(1.0, gen)
        thr = tracker.update(wav)
        segs = detect(wav, thr, opts)
        all_segments.append(segs)
    return all_segments
