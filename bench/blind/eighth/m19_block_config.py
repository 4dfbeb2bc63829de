"""Residual MLP block configured by a dataclass, swept over a few hyper-parameter settings."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class BlockConfig:
    dim: int = 32
    expansion: int = 4
    activation: str = "gelu"
    dropout: float = 0.0
    layer_scale: float = 1.0
    pre_norm: bool = True


_ACTS = {"gelu": F.gelu, "relu": F.relu, "silu": F.silu}


def init_params(cfg: BlockConfig) -> dict:
    hid = cfg.dim * cfg.expansion
    return {
        "w1": nn.init.xavier_uniform_(torch.empty(hid, cfg.dim)).requires_grad_(),
        "w2": nn.init.xavier_uniform_(torch.empty(cfg.dim, hid)).requires_grad_(),
        "ln_w": torch.ones(cfg.dim, requires_grad=True),
        "ln_b": torch.zeros(cfg.dim, requires_grad=True),
    }


@torch.compile
def block_forward(x: torch.Tensor, params: dict, cfg: BlockConfig, training: bool = True) -> torch.Tensor:
    h = F.layer_norm(x, (cfg.dim,), params["ln_w"], params["ln_b"]) if cfg.pre_norm else x
    h = _ACTS[cfg.activation](h @ params["w1"].T)
    h = F.dropout(h, cfg.dropout, training=training)
    out = x + cfg.layer_scale * (h @ params["w2"].T)
    if not cfg.pre_norm:
        out = F.layer_norm(out, (cfg.dim,), params["ln_w"], params["ln_b"])
    return out


def fit(cfg: BlockConfig, steps: int = 3) -> float:
    params = init_params(cfg)
    opt = torch.optim.Adam(params.values(), lr=1e-3)
    for _ in range(steps):
        x = torch.randn(16, cfg.dim)
        loss = block_forward(x, params, cfg).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


def main() -> None:
    torch.manual_seed(0)
    base = BlockConfig()
    sweep = [
        base,
        dataclasses.replace(base, activation="silu"),
        dataclasses.replace(base, dropout=0.1),
        dataclasses.replace(base, layer_scale=0.1, pre_norm=False),
    ]
    for cfg in sweep:
        print(cfg, round(fit(cfg), 4))


if __name__ == "__main__":
    main()
