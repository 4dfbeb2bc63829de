"""Keyword-spotting audio model: dilated 1-D convolutions with causal padding and statistics pooling."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalConv(nn.Module):
    def __init__(self, cin, cout, k, dilation):
        super().__init__()
        self.pad = (k - 1) * dilation
        self.conv = nn.Conv1d(cin, cout, k, dilation=dilation)

    def forward(self, x):
        return self.conv(F.pad(x, (self.pad, 0)))


class TCN(nn.Module):
    def __init__(self, cin=8, ch=16, levels=4, k=3, n_classes=5):
        super().__init__()
        self.proj = nn.Conv1d(cin, ch, 1)
        self.levels = nn.ModuleList([CausalConv(ch, ch, k, 2 ** i) for i in range(levels)])
        self.head = nn.Linear(2 * ch, n_classes)
        self.receptive_field = 1 + sum((k - 1) * 2 ** i for i in range(levels))

    def forward(self, feats):
        if not isinstance(feats, torch.Tensor):
            feats = torch.as_tensor(feats)
        if feats.dim() == 2:
            feats = feats.unsqueeze(0)
        assert feats.shape[-1] >= 1
        x = self.proj(feats)
        for lvl in self.levels:
            x = x + torch.tanh(lvl(x)) * torch.sigmoid(lvl(x))
        mean = x.mean(-1)
        std = (x.var(-1, unbiased=False) + 1e-5).sqrt()
        scale = 1.0 / math.sqrt(x.shape[1])
        return self.head(torch.cat([mean, std], dim=-1) * scale)


def spec_augment_fixed(spec, freq_mask=2, time_mask=3):
    f0 = spec.shape[1] // 3
    t0 = spec.shape[2] // 4
    out = spec.clone()
    out[:, f0 : f0 + freq_mask, :] = 0
    out[:, :, t0 : t0 + time_mask] = 0
    return out


def main():
    torch.manual_seed(0)
    tcn = TCN().eval()
    tcn.compile(backend="eager")
    with torch.no_grad():
        tcn(torch.randn(2, 8, 40))
        tcn(torch.randn(2, 8, 40))
    sa = torch.compile(spec_augment_fixed, backend="eager")
    sa(torch.randn(2, 8, 40))
    sa(torch.randn(2, 8, 40))
