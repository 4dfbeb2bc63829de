"""Probabilistic forecaster with RevIN normalisation and autoregressive multi-horizon rollout."""
import torch
import torch.nn as nn


class RevIN(nn.Module):
    def __init__(self, channels, eps=1e-5, affine=True):
        super().__init__()
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = nn.Parameter(torch.ones(channels))
            self.bias = nn.Parameter(torch.zeros(channels))

    def forward(self, x, mode: str):
        if mode == "norm":
            self.mean = x.mean(1, keepdim=True).detach()
            self.stdev = torch.sqrt(x.var(1, keepdim=True, unbiased=False) + self.eps).detach()
            x = (x - self.mean) / self.stdev
            return x * self.weight + self.bias if self.affine else x
        elif mode == "denorm":
            if self.affine:
                x = (x - self.bias) / (self.weight + self.eps * self.eps)
            stdev, mean = self.stdev, self.mean
            while stdev.dim() < x.dim():
                stdev, mean = stdev.unsqueeze(-2), mean.unsqueeze(-2)
            return x * stdev + mean
        raise NotImplementedError(mode)


class LSTMForecaster(nn.Module):
    def __init__(self, channels=3, hidden=16, quantiles=(0.1, 0.5, 0.9)):
        super().__init__()
        self.revin = RevIN(channels)
        self.lstm = nn.LSTM(channels, hidden, batch_first=True)
        self.quantiles = quantiles
        self.head = nn.Linear(hidden, channels * len(quantiles))

    def forward(self, history, horizon: int, teacher=None):
        x = self.revin(history, "norm")
        out, (h, c) = self.lstm(x)
        last = x[:, -1:]
        preds = []
        for step in range(horizon):
            q = self.head(out[:, -1]).view(x.size(0), -1, len(self.quantiles))
            median = q[..., len(self.quantiles) // 2]
            preds.append(q)
            nxt = teacher[:, step:step + 1] if teacher is not None else median[:, None]
            out, (h, c) = self.lstm(nxt, (h, c))
        q = torch.stack(preds, 1)
        return self.revin(q.permute(0, 1, 3, 2), "denorm").permute(0, 1, 3, 2)


def pinball_loss(pred, target, quantiles):
    qs = torch.tensor(quantiles)
    diff = target[..., None] - pred
    return torch.maximum(qs * diff, (qs - 1) * diff).mean()


def main():
    torch.manual_seed(0)
    model = LSTMForecaster()
    fc = torch.compile(model)
    for horizon in (3, 4, 6):
        hist = torch.randn(2, 12, 3).cumsum(1)
        fut = torch.randn(2, horizon, 3)
        pred = fc(hist, horizon)
        loss = pinball_loss(pred, fut, model.quantiles)
        loss.backward()
    return loss.item()


if __name__ == "__main__":
    print(main())
