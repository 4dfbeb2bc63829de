"""SpecAugment on batched log-mel features: random frequency / time masks, applied only in training mode."""
import random

import torch
import torch.nn as nn


class SpecAugment(nn.Module):
    def __init__(self, freq_mask_param=4, time_mask_param=10, n_freq_masks=2, n_time_masks=2, p=1.0):
        super().__init__()
        self.freq_mask_param = freq_mask_param
        self.time_mask_param = time_mask_param
        self.n_freq_masks = n_freq_masks
        self.n_time_masks = n_time_masks
        self.p = p

    def _mask_along(self, x, dim, param):
        size = x.shape[dim]
        width = torch.randint(0, param + 1, (1,)).item()
        start = random.randint(0, max(size - width, 0))
        idx = torch.arange(size)
        mask = (idx >= start) & (idx < start + width)
        shape = [1] * x.dim()
        shape[dim] = size
        return x.masked_fill(mask.view(shape), 0.0)

    def forward(self, feats):
        if not self.training:
            return feats
        if random.random() > self.p:
            return feats
        for _ in range(self.n_freq_masks):
            feats = self._mask_along(feats, 1, self.freq_mask_param)
        for _ in range(self.n_time_masks):
            feats = self._mask_along(feats, 2, self.time_mask_param)
        return feats


class Encoder(nn.Module):
    def __init__(self, n_mels=20, hidden=32, vocab=12):
        super().__init__()
        self.augment = SpecAugment()
        self.conv = nn.Conv1d(n_mels, hidden, 3, padding=1)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, feats):
        feats = self.augment(feats)
        h = torch.relu(self.conv(feats)).transpose(1, 2)
        h, _ = self.gru(h)
        return self.out(h).log_softmax(-1)


def main():
    random.seed(0)
    torch.manual_seed(0)
    enc = Encoder()
    enc.compile(backend="eager")
    enc.train()
    for _ in range(2):
        enc(torch.randn(2, 20, 30))
    enc.eval()
    with torch.no_grad():
        enc(torch.randn(2, 20, 30))
