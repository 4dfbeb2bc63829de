"""Tabular regression where the validation split comes straight from numpy (float64) into the compiled model."""
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class StandardScaler:
    def fit(self, x):
        self.mean_ = x.mean(axis=0)
        self.scale_ = x.std(axis=0) + 1e-8
        return self

    def transform(self, x):
        return (x - self.mean_) / self.scale_


class ResMLP(nn.Module):
    def __init__(self, d_in, width=32, depth=2):
        super().__init__()
        self.inp = nn.Linear(d_in, width)
        self.blocks = nn.ModuleList(
            [nn.Sequential(nn.LayerNorm(width), nn.Linear(width, width), nn.SiLU()) for _ in range(depth)])
        self.out = nn.Linear(width, 1)

    def forward(self, x):
        x = x.float()
        h = self.inp(x)
        for blk in self.blocks:
            h = h + blk(h)
        return self.out(h).squeeze(-1)


def main():
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    X = np.random.randn(200, 6)
    y = X @ np.random.randn(6) + 0.1 * np.random.randn(200)
    scaler = StandardScaler().fit(X[:150])
    X_tr = torch.tensor(scaler.transform(X[:150]), dtype=torch.float32)
    y_tr = torch.tensor(y[:150], dtype=torch.float32)
    X_va = torch.from_numpy(scaler.transform(X[150:]))   # float64!
    y_va = torch.from_numpy(y[150:])
    model = ResMLP(6)
    cmodel = torch.compile(model)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for epoch in range(3):
        for i in range(0, 150, 50):
            loss = F.mse_loss(cmodel(X_tr[i:i + 50]), y_tr[i:i + 50])
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            val = F.mse_loss(cmodel(X_va).double(), y_va).item()
    with torch.no_grad():
        # smoke-test reduced-precision inputs (what the serving path sends)
        low = cmodel(X_va.to(torch.bfloat16)).double()
        val_low = F.mse_loss(low, y_va).item()
    return val, val_low


if __name__ == "__main__":
    print(main())
