"""Train for a few epochs, validating after each; val set size is not a multiple of the batch."""
from __future__ import annotations

import torch

from .loop import evaluate, train_one_epoch
from .model import build_model

N_CLS = 4


def make_split(n: int, bs: int):
    data = [(torch.randn(min(bs, n - s), 3, 16, 16), torch.randint(0, N_CLS, (min(bs, n - s), 16, 16)))
            for s in range(0, n, bs)]
    return data


def main() -> None:
    torch.manual_seed(0)
    model = build_model(N_CLS)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    train = make_split(16, 4)
    val = make_split(10, 4)
    for epoch in range(2):
        loss = train_one_epoch(model, opt, train)
        miou = evaluate(model, val, N_CLS)
        print(f"epoch {epoch} train_loss {loss:.3f} val_mIoU {miou:.3f}")


if __name__ == "__main__":
    main()
