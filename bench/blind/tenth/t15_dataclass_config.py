"""Model and runtime configs as dataclasses; a global runtime flag is flipped between evaluation passes."""
from dataclasses import dataclass, replace

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass(frozen=True)
class MLPConfig:
    d_model: int = 32
    expansion: int = 4
    dropout: float = 0.1
    activation: str = "gelu"
    bias: bool = True


@dataclass
class RuntimeConfig:
    use_fused_norm: bool = False
    logit_soft_cap: float = 0.0


RUNTIME = RuntimeConfig()

ACTIVATIONS = {"gelu": F.gelu, "relu": F.relu, "silu": F.silu}


class FeedForward(nn.Module):
    def __init__(self, cfg: MLPConfig):
        super().__init__()
        hidden = cfg.d_model * cfg.expansion
        self.fc1 = nn.Linear(cfg.d_model, hidden, bias=cfg.bias)
        self.fc2 = nn.Linear(hidden, cfg.d_model, bias=cfg.bias)
        self.norm = nn.LayerNorm(cfg.d_model)

    def forward(self, x, cfg: MLPConfig):
        if RUNTIME.use_fused_norm:
            h = F.layer_norm(x, x.shape[-1:], self.norm.weight, self.norm.bias)
        else:
            h = self.norm(x)
        h = ACTIVATIONS[cfg.activation](self.fc1(h))
        h = F.dropout(h, p=cfg.dropout, training=self.training)
        return x + self.fc2(h)


class Classifier(nn.Module):
    def __init__(self, cfg: MLPConfig, n_layers=2, n_classes=10):
        super().__init__()
        self.blocks = nn.ModuleList([FeedForward(cfg) for _ in range(n_layers)])
        self.head = nn.Linear(cfg.d_model, n_classes)

    def forward(self, x, cfg: MLPConfig):
        for blk in self.blocks:
            x = blk(x, cfg)
        logits = self.head(x)
        if RUNTIME.logit_soft_cap > 0:
            logits = RUNTIME.logit_soft_cap * torch.tanh(logits / RUNTIME.logit_soft_cap)
        return logits


def main():
    torch.manual_seed(0)
    base = MLPConfig()
    model = Classifier(base)
    fwd = torch.compile(model)
    x = torch.randn(8, 32)
    fwd(x, base)
    fwd(x, base)
    fwd(x, replace(base, dropout=0.0))
    model.eval()
    with torch.no_grad():
        fwd(x, replace(base, activation="silu"))
        RUNTIME.use_fused_norm = True
        fwd(x, base)
        RUNTIME.logit_soft_cap = 30.0
        fwd(x, base)


if __name__ == "__main__":
    main()
