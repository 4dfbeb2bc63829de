"""Time-series forecaster (LSTM-free TCN) whose shared compiled loss fn is reused under no_grad for val."""
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalConv1d(nn.Conv1d):
    def __init__(self, c_in, c_out, k, dilation=1):
        super().__init__(c_in, c_out, k, dilation=dilation)
        self.left_pad = (k - 1) * dilation

    def forward(self, x):
        return super().forward(F.pad(x, (self.left_pad, 0)))


class TCN(nn.Module):
    def __init__(self, n_features=3, channels=16, levels=3, horizon=4):
        super().__init__()
        layers, c = [], n_features
        for i in range(levels):
            layers += [CausalConv1d(c, channels, 3, dilation=2 ** i), nn.GELU()]
            c = channels
        self.net = nn.Sequential(*layers)
        self.head = nn.Linear(channels, horizon)

    def forward(self, x):  # x: [B, T, F]
        h = self.net(x.transpose(1, 2))
        return self.head(h[:, :, -1])


@torch.compile
def quantile_loss(model, x, y, quantile: float = 0.5):
    pred = model(x)
    err = y - pred
    return torch.max(quantile * err, (quantile - 1) * err).mean()


def make_windows(series, lookback, horizon):
    xs, ys = [], []
    for i in range(len(series) - lookback - horizon):
        xs.append(series[i:i + lookback])
        ys.append(series[i + lookback:i + lookback + horizon, 0])
    return torch.from_numpy(np.stack(xs)), torch.from_numpy(np.stack(ys))


def main():
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    t = np.arange(300, dtype=np.float32)
    series = np.stack([np.sin(t / 10), np.cos(t / 7), np.random.randn(300).astype(np.float32) * 0.1], 1)
    x, y = make_windows(series.astype(np.float32), 24, 4)
    x_tr, y_tr, x_va, y_va = x[:200], y[:200], x[200:264], y[200:264]
    model = TCN()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for epoch in range(3):
        for i in range(0, 192, 64):
            loss = quantile_loss(model, x_tr[i:i + 64], y_tr[i:i + 64])
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            val = quantile_loss(model, x_va, y_va)
    return val.item()


if __name__ == "__main__":
    print(main())
