"""Temporal fusion-ish forecaster configured once from a dict; compiled with model.compile()."""
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CONFIG = {
    "hidden": 16,
    "n_heads": 2,
    "dropout": 0.1,
    "use_static_context": True,
    "quantiles": [0.1, 0.5, 0.9],
    "horizon": 4,
}


class GatedResidualNetwork(nn.Module):
    def __init__(self, d_in, d_hidden, d_out, dropout, d_context=None):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.context = nn.Linear(d_context, d_hidden, bias=False) if d_context else None
        self.fc2 = nn.Linear(d_hidden, 2 * d_out)
        self.skip = nn.Linear(d_in, d_out) if d_in != d_out else nn.Identity()
        self.drop = nn.Dropout(dropout)
        self.norm = nn.LayerNorm(d_out)

    def forward(self, x, c=None):
        h = self.fc1(x)
        if self.context is not None and c is not None:
            h = h + self.context(c)
        h = self.drop(self.fc2(F.elu(h)))
        return self.norm(self.skip(x) + F.glu(h, dim=-1))


class Forecaster(nn.Module):
    def __init__(self, n_inputs, n_static, cfg):
        super().__init__()
        d = cfg["hidden"]
        self.use_static = cfg["use_static_context"]
        self.quantiles = tuple(cfg["quantiles"])
        self.horizon = cfg["horizon"]
        self.static_enc = GatedResidualNetwork(n_static, d, d, cfg["dropout"])
        self.input_grn = GatedResidualNetwork(n_inputs, d, d, cfg["dropout"], d_context=d if self.use_static else None)
        self.attn = nn.MultiheadAttention(d, cfg["n_heads"], dropout=cfg["dropout"], batch_first=True)
        self.out = nn.Linear(d, self.horizon * len(self.quantiles))

    def forward(self, x, static):
        c = self.static_enc(static)[:, None, :] if self.use_static else None
        h = self.input_grn(x, c)
        a, _ = self.attn(h, h, h, need_weights=False)
        y = self.out(a[:, -1])
        return y.view(-1, self.horizon, len(self.quantiles))

    def loss(self, pred, target):
        losses = []
        for i, q in enumerate(self.quantiles):
            err = target - pred[..., i]
            losses.append(torch.max(q * err, (q - 1) * err))
        return torch.stack(losses).mean()


def main():
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    model = Forecaster(n_inputs=5, n_static=3, cfg=CONFIG)
    model.compile()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(5):
        x = torch.randn(8, 20, 5)
        static = torch.randn(8, 3)
        target = torch.randn(8, CONFIG["horizon"])
        loss = model.loss(model(x, static), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


if __name__ == "__main__":
    print(main())
