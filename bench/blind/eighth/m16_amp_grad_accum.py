"""Mixed-precision training with gradient accumulation and a bf16 warm-up switch."""
from __future__ import annotations

from typing import List, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLPClassifier(nn.Module):
    def __init__(self, d_in: int = 20, hidden: int = 64, n_cls: int = 5) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.GELU(), nn.LayerNorm(hidden), nn.Linear(hidden, n_cls))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


@torch.compile
def micro_step(model: nn.Module, x: torch.Tensor, y: torch.Tensor, accum_steps: int,
               use_amp: bool, label_smoothing: float = 0.0) -> torch.Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=use_amp):
        logits = model(x)
    loss = F.cross_entropy(logits.float(), y, label_smoothing=label_smoothing)
    (loss / accum_steps).backward()
    return loss.detach()


def chunk_indices(n: int, micro_bs: int) -> List[Tuple[int, int]]:
    return [(s, min(s + micro_bs, n)) for s in range(0, n, micro_bs)]


def train_epoch(model, opt, x, y, micro_bs: int, accum: int, use_amp: bool) -> float:
    chunks = chunk_indices(x.shape[0], micro_bs)
    losses = []
    for i in range(0, len(chunks), accum):
        group = chunks[i:i + accum]
        for s, e in group:
            losses.append(micro_step(model, x[s:e], y[s:e], len(group), use_amp))
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
    return torch.stack(losses).mean().item()


def main() -> None:
    torch.manual_seed(0)
    model = MLPClassifier()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(56, 20)
    y = torch.randint(0, 5, (56,))
    warmup_epochs = 1
    for epoch in range(3):
        use_amp = epoch >= warmup_epochs
        loss = train_epoch(model, opt, x, y, micro_bs=8, accum=3, use_amp=use_amp)
        print(f"epoch {epoch} amp={use_amp} loss={loss:.4f}")


if __name__ == "__main__":
    main()
