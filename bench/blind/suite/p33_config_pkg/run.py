import torch
import torch.nn as nn

from . import config
from .config import ModelConfig, describe

ACTS = {"relu": torch.relu, "gelu": nn.functional.gelu, "silu": nn.functional.silu}


class ConfigurableMLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.fc1 = nn.Linear(cfg.hidden, cfg.hidden)
        self.fc2 = nn.Linear(cfg.hidden, cfg.hidden)
        self.norm = nn.LayerNorm(cfg.hidden) if cfg.norm == "layer" else nn.Identity()
        self.step = 0

    def forward(self, x):
        act = ACTS[self.cfg.activation]
        h = act(self.fc1(self.norm(x)))
        h = nn.functional.dropout(h, self.cfg.dropout, self.training)
        out = self.fc2(h)
        if self.cfg.use_residual:
            out = out + x
        if config.DEBUG:
            describe(out)
        return out


def train_tick(model, x, step):
    y = model(x)
    if step % config.LOG_EVERY == 0:
        describe(y)
    return y.sum()


def main():
    torch.manual_seed(0)
    cfg = ModelConfig()
    model = ConfigurableMLP(cfg)
    model.compile(backend="eager")
    model(torch.randn(2, 8))
    cfg.activation = "gelu"
    model(torch.randn(2, 8))
    config.DEBUG = True
    model(torch.randn(2, 8))
    config.DEBUG = False

    tick = torch.compile(train_tick, backend="eager")
    plain = ConfigurableMLP(ModelConfig(use_residual=False))
    for s in range(3):
        tick(plain, torch.randn(2, 8), s)
