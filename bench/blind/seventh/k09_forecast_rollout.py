"""Autoregressive multi-horizon forecasting with a GRU encoder/decoder."""
import torch
import torch.nn as nn


class Seq2SeqForecaster(nn.Module):
    def __init__(self, n_series=3, hidden=24):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv1d(n_series, hidden, 5, padding=2), nn.Tanh())
        self.cell = nn.GRUCell(n_series, hidden)
        self.head = nn.Linear(hidden, n_series)

    def forward(self, context, horizon):
        h = self.encoder(context.transpose(1, 2)).mean(-1)
        y = context[:, -1]
        outs = []
        for _ in range(horizon):
            h = self.cell(y, h)
            y = self.head(h) + y
            outs.append(y)
        return torch.stack(outs, dim=1)


def evaluate_horizons(model, series, horizons, context_len=16):
    errors = {}
    with torch.no_grad():
        for horizon in horizons:
            ctx = series[:, :context_len]
            target = series[:, context_len:context_len + horizon]
            pred = model(ctx, horizon)
            errors[horizon] = (pred - target).abs().mean()
    return errors


def main():
    torch.manual_seed(0)
    t = torch.arange(80, dtype=torch.float32)
    series = torch.stack([torch.sin(t / 5), torch.cos(t / 7), torch.sin(t / 11) * 0.5], dim=-1)[None].repeat(4, 1, 1)
    model = torch.compile(Seq2SeqForecaster().eval())
    print(evaluate_horizons(model, series, [24, 12, 6, 48, 3]))


if __name__ == "__main__":
    main()
