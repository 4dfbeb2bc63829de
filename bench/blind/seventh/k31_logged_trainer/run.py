import logging

import torch

from .trainer import TabularMLP, Trainer


def synthetic_batches(n_batches, bs=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    for _ in range(n_batches):
        x_num = torch.randn(bs, 8, generator=g)
        x_cat = torch.stack([torch.randint(0, 5, (bs,), generator=g), torch.randint(0, 7, (bs,), generator=g)], 1)
        y = x_num[:, 0] * 2 + x_cat[:, 0].float() * 0.1
        yield x_num, x_cat, y


def main():
    logging.basicConfig(level=logging.WARNING)
    torch.manual_seed(0)
    trainer = Trainer(TabularMLP())
    print(trainer.fit(synthetic_batches(5)))
