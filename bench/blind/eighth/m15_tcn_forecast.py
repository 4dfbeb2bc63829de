"""Temporal convolutional network for multi-horizon forecasting on sliding windows."""
from __future__ import annotations

from typing import Iterator, Tuple

import torch
import torch.nn as nn

WINDOW, HORIZON, BATCH = 48, 8, 16


class CausalConv(nn.Module):
    def __init__(self, ch: int, dilation: int) -> None:
        super().__init__()
        self.pad = 2 * dilation
        self.conv = nn.Conv1d(ch, ch, 3, dilation=dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(nn.functional.pad(x, (self.pad, 0)))


class TCN(nn.Module):
    def __init__(self, n_series: int = 3, ch: int = 16, levels: int = 3) -> None:
        super().__init__()
        self.inp = nn.Conv1d(n_series, ch, 1)
        self.blocks = nn.ModuleList([CausalConv(ch, 2 ** i) for i in range(levels)])
        self.head = nn.Linear(ch, n_series * HORIZON)
        self.n_series = n_series

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.inp(x.transpose(1, 2))
        for blk in self.blocks:
            h = h + torch.relu(blk(h))
        out = self.head(h[:, :, -1])
        return out.view(x.shape[0], HORIZON, self.n_series)


def windows(series: torch.Tensor, batch: int) -> Iterator[Tuple[torch.Tensor, torch.Tensor]]:
    """Yields full batches of (context, target) windows; the ragged tail is dropped."""
    starts = torch.randperm(series.shape[0] - WINDOW - HORIZON)
    n_full = len(starts) // batch
    for b in range(n_full):
        idx = starts[b * batch:(b + 1) * batch]
        ctx = torch.stack([series[i:i + WINDOW] for i in idx.tolist()])
        tgt = torch.stack([series[i + WINDOW:i + WINDOW + HORIZON] for i in idx.tolist()])
        yield ctx, tgt


def main() -> None:
    torch.manual_seed(0)
    t = torch.arange(400, dtype=torch.float32)
    series = torch.stack([torch.sin(t / 10), torch.cos(t / 17), torch.sin(t / 5) * 0.5], dim=1)
    series = series + 0.05 * torch.randn_like(series)
    model = TCN()
    compiled = torch.compile(model)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for epoch in range(2):
        total, n = 0.0, 0
        for ctx, tgt in windows(series, BATCH):
            loss = nn.functional.l1_loss(compiled(ctx), tgt)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss.detach()
            n += 1
            if n >= 6:
                break
        print(f"epoch {epoch} mae {(total / n).item():.4f}")


if __name__ == "__main__":
    main()
