"""Mixed-precision training loop with dynamic loss scaling and gradient clipping (CPU bf16 autocast)."""
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class TrainConfig:
    use_amp: bool = True
    amp_dtype: torch.dtype = torch.bfloat16
    max_grad_norm: float = 1.0
    init_scale: float = 2.0 ** 8
    growth_interval: int = 3


class LossScaler:
    def __init__(self, init_scale, growth_interval):
        self.scale = torch.tensor(init_scale)
        self.growth_interval = growth_interval
        self.good_steps = 0

    def update(self, found_inf):
        if found_inf:
            self.scale = self.scale / 2
            self.good_steps = 0
        else:
            self.good_steps += 1
            if self.good_steps % self.growth_interval == 0:
                self.scale = self.scale * 2


class MLP(nn.Module):
    def __init__(self, d_in=12, d_hidden=48, d_out=4):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.ln = nn.LayerNorm(d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc2(F.gelu(self.ln(self.fc1(x))))


class AmpTrainer:
    def __init__(self, model, cfg):
        self.model, self.cfg = model, cfg
        self.opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        self.scaler = LossScaler(cfg.init_scale, cfg.growth_interval)
        self.skipped = 0

    @torch.compile
    def step(self, x, y):
        with torch.autocast("cpu", dtype=self.cfg.amp_dtype, enabled=self.cfg.use_amp):
            logits = self.model(x)
            loss = F.cross_entropy(logits.float(), y)
        (loss * self.scaler.scale).backward()
        for p in self.model.parameters():
            p.grad.div_(self.scaler.scale)
        grad_norm = nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.max_grad_norm)
        found_inf = not torch.isfinite(grad_norm)
        if found_inf:
            self.skipped += 1
        else:
            self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        self.scaler.update(found_inf)
        return loss.detach()


def load_batch(rng, n=32):
    # the data pipeline hands back numpy float64 arrays
    x = rng.standard_normal((n, 12))
    y = rng.integers(0, 4, n)
    return torch.from_numpy(x).float(), torch.from_numpy(y)


def main():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    cfg = TrainConfig()
    trainer = AmpTrainer(MLP(), cfg)
    losses = []
    for i in range(6):
        if i == 4:
            # bf16 diverged on the real run; finish in fp32
            cfg.use_amp = False
        losses.append(trainer.step(*load_batch(rng)))
    # sanity check on a raw fp64 validation batch
    xv = torch.from_numpy(rng.standard_normal((8, 12)))
    with torch.no_grad():
        val = trainer.model.double()(xv)
    return losses, val.dtype
