import torch

from .ema import ModelEMA
from .train import build, fit


def main():
    torch.manual_seed(0)
    model = build()
    ema = ModelEMA(model, decay=0.99, tau=5.0)
    print(fit(model, ema, steps=5))
    print({k: v.shape for k, v in ema.shadow.items()})
