"""Time-series forecasting: LSTM encoder, autoregressive GRU-cell decoder with teacher forcing, scaling."""
import random

import torch
import torch.nn as nn


class Seq2Seq(nn.Module):
    def __init__(self, n_feat=3, hidden=16, teacher_forcing=0.5):
        super().__init__()
        self.encoder = nn.LSTM(n_feat, hidden, batch_first=True)
        self.cell = nn.GRUCell(1, hidden)
        self.out = nn.Linear(hidden, 1)
        self.teacher_forcing = teacher_forcing

    def forward(self, history, horizon, target=None):
        _, (h, _) = self.encoder(history)
        h = h[-1]
        y = history[:, -1, :1]
        preds = []
        for t in range(horizon):
            h = self.cell(y, h)
            y = self.out(h)
            preds.append(y)
            if target is not None and random.random() < self.teacher_forcing:
                y = target[:, t : t + 1]
        return torch.cat(preds, dim=1)


class Decoder(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.cell = nn.GRUCell(1, hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, h, y, horizon):
        preds = []
        for _ in range(horizon):
            h = self.cell(y, h)
            y = self.out(h)
            preds.append(y)
        return torch.cat(preds, dim=1)


def robust_scale(series, eps=1e-6):
    med = series.median(dim=-1, keepdim=True).values
    q = torch.quantile(series, torch.tensor([0.25, 0.75]), dim=-1, keepdim=True)
    iqr = (q[1] - q[0]).clamp_min(eps)
    return (series - med) / iqr


def main():
    random.seed(0)
    torch.manual_seed(0)
    model = Seq2Seq()
    model.compile(backend="eager")
    model(torch.randn(2, 10, 3), 4, torch.randn(2, 4))
    model(torch.randn(2, 12, 3), 6)

    dec = Decoder()
    dec.compile(backend="eager")
    for horizon in (3, 5, 7):
        dec(torch.randn(2, 16), torch.randn(2, 1), horizon)

    rs = torch.compile(robust_scale, backend="eager")
    rs(torch.randn(3, 20))
    rs(torch.randn(3, 30))
