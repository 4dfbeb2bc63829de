import torch
import torch.nn as nn

from . import trainer as T


def batches(n, bs, gen):
    return [(torch.randn(bs, 10, generator=gen), torch.randint(0, 3, (bs,), generator=gen)) for _ in range(n)]


def main():
    gen = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    trainer = T.Trainer(model, opt, callbacks=[T.PrintLoss(every=2), T.EarlyStopping(patience=3)])
    trainer.fit(batches(3, 8, gen), batches(2, 8, gen))
    T.FLAGS["grad_accum"] = 2
    T.FLAGS["log_grad_norm"] = False
    trainer.fit(batches(4, 8, gen), batches(1, 4, gen))
