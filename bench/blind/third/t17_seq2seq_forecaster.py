"""LSTM encoder-decoder forecaster with scheduled teacher forcing and a variable forecast horizon."""
import random

import torch
import torch.nn as nn


class Seq2SeqForecaster(nn.Module):
    def __init__(self, n_features, hidden=32):
        super().__init__()
        self.encoder = nn.LSTM(n_features, hidden, batch_first=True)
        self.decoder_cell = nn.LSTMCell(1, hidden)
        self.proj = nn.Linear(hidden, 1)

    def forward(self, history, horizon, target=None, teacher_forcing=0.0):
        _, (h, c) = self.encoder(history)
        h, c = h[0], c[0]
        y_prev = history[:, -1, :1]
        outputs = []
        for t in range(horizon):
            h, c = self.decoder_cell(y_prev, (h, c))
            y = self.proj(h)
            outputs.append(y)
            if target is not None and random.random() < teacher_forcing:
                y_prev = target[:, t : t + 1]
            else:
                y_prev = y
        return torch.cat(outputs, dim=1)


def make_window(batch, lookback, horizon, n_features):
    t = torch.arange(lookback + horizon).float()
    phase = torch.rand(batch, 1) * 6.28
    series = torch.sin(t[None] * 0.3 + phase) + 0.05 * torch.randn(batch, lookback + horizon)
    x = series[:, :lookback, None].repeat(1, 1, n_features)
    return x, series[:, lookback:]


def main():
    random.seed(0)
    torch.manual_seed(0)
    model = Seq2SeqForecaster(3)
    fwd = torch.compile(model, backend="eager")
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    epochs = 3
    for epoch in range(epochs):
        tf_ratio = 0.5 * (1 - epoch / epochs)
        x, y = make_window(4, 12, 6, 3)
        pred = fwd(x, 6, target=y, teacher_forcing=tf_ratio)
        loss = nn.functional.mse_loss(pred, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        for horizon in (6, 12):
            x, _ = make_window(4, 12, horizon, 3)
            fwd(x, horizon)
