"""N-BEATS style univariate forecaster (generic + trend stacks) with debug logging in forward."""
import logging
import random

import numpy as np
import torch
import torch.nn as nn

logger = logging.getLogger(__name__)


def linear_space(backcast_length, forecast_length):
    ls = np.arange(-backcast_length, forecast_length, 1) / forecast_length
    return ls[:backcast_length].astype(np.float32), ls[backcast_length:].astype(np.float32)


class Block(nn.Module):
    def __init__(self, units, thetas_dim, backcast_length, forecast_length, share_thetas=False):
        super().__init__()
        self.fc = nn.Sequential(
            nn.Linear(backcast_length, units), nn.ReLU(),
            nn.Linear(units, units), nn.ReLU(),
            nn.Linear(units, units), nn.ReLU(),
        )
        self.theta_b_fc = nn.Linear(units, thetas_dim, bias=False)
        self.theta_f_fc = self.theta_b_fc if share_thetas else nn.Linear(units, thetas_dim, bias=False)
        b_ls, f_ls = linear_space(backcast_length, forecast_length)
        self.register_buffer("backcast_linspace", torch.from_numpy(b_ls))
        self.register_buffer("forecast_linspace", torch.from_numpy(f_ls))


class GenericBlock(Block):
    def __init__(self, units, thetas_dim, backcast_length, forecast_length):
        super().__init__(units, thetas_dim, backcast_length, forecast_length)
        self.backcast_fc = nn.Linear(thetas_dim, backcast_length)
        self.forecast_fc = nn.Linear(thetas_dim, forecast_length)

    def forward(self, x):
        h = self.fc(x)
        return self.backcast_fc(self.theta_b_fc(h)), self.forecast_fc(self.theta_f_fc(h))


class TrendBlock(Block):
    def __init__(self, units, thetas_dim, backcast_length, forecast_length):
        super().__init__(units, thetas_dim, backcast_length, forecast_length, share_thetas=True)
        p = thetas_dim
        self.register_buffer("T_b", torch.stack([self.backcast_linspace ** i for i in range(p)]))
        self.register_buffer("T_f", torch.stack([self.forecast_linspace ** i for i in range(p)]))

    def forward(self, x):
        h = self.fc(x)
        return self.theta_b_fc(h) @ self.T_b, self.theta_f_fc(h) @ self.T_f


class NBeatsNet(nn.Module):
    def __init__(self, backcast_length=24, forecast_length=8, units=32, blocks_per_stack=2):
        super().__init__()
        self.forecast_length = forecast_length
        blocks = []
        for _ in range(blocks_per_stack):
            blocks.append(TrendBlock(units, 3, backcast_length, forecast_length))
        for _ in range(blocks_per_stack):
            blocks.append(GenericBlock(units, 8, backcast_length, forecast_length))
        self.blocks = nn.ModuleList(blocks)

    def forward(self, backcast):
        forecast = backcast.new_zeros(backcast.shape[0], self.forecast_length)
        for i, block in enumerate(self.blocks):
            b, f = block(backcast)
            backcast = backcast - b
            forecast = forecast + f
            logger.debug("block %d: residual norm %.4f", i, backcast.norm())
        return backcast, forecast


def make_series(n=400, seed=0):
    rng = np.random.RandomState(seed)
    t = np.arange(n, dtype=np.float32)
    return (0.01 * t + np.sin(t / 6.0) + 0.1 * rng.randn(n)).astype(np.float32)


def windows(series, backcast, forecast, batch_size, rng):
    idx = rng.randint(0, len(series) - backcast - forecast, size=batch_size)
    x = np.stack([series[i:i + backcast] for i in idx])
    y = np.stack([series[i + backcast:i + backcast + forecast] for i in idx])
    return torch.from_numpy(x), torch.from_numpy(y)


def main():
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    rng = np.random.RandomState(0)
    series = make_series()
    model = NBeatsNet()
    compiled = torch.compile(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(5):
        x, y = windows(series, 24, 8, 16, rng)
        _, forecast = compiled(x)
        loss = torch.nn.functional.l1_loss(forecast, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


if __name__ == "__main__":
    print(main())
