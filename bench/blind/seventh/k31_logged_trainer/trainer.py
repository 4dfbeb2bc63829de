import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger("tabular.trainer")


class TabularMLP(nn.Module):
    def __init__(self, n_num=8, cat_sizes=(5, 7), emb=4, hidden=32):
        super().__init__()
        self.embs = nn.ModuleList([nn.Embedding(n, emb) for n in cat_sizes])
        self.net = nn.Sequential(nn.Linear(n_num + emb * len(cat_sizes), hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, x_num, x_cat):
        embs = [e(x_cat[:, i]) for i, e in enumerate(self.embs)]
        return self.net(torch.cat([x_num] + embs, dim=1)).squeeze(-1)


class Trainer:
    def __init__(self, model, lr=1e-3, log_every=2):
        self.model = model
        self.opt = torch.optim.AdamW(model.parameters(), lr=lr)
        self.log_every = log_every
        self.train_step = torch.compile(self._train_step)

    def _train_step(self, x_num, x_cat, y, step):
        t0 = time.perf_counter()
        pred = self.model(x_num, x_cat)
        loss = F.mse_loss(pred, y)
        if step % self.log_every == 0:
            logger.info("step %d loss %.4f (%.1f ms)", step, loss.item(), 1000 * (time.perf_counter() - t0))
        return loss

    def fit(self, batches):
        for step, (x_num, x_cat, y) in enumerate(batches):
            loss = self.train_step(x_num, x_cat, y, step)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
        return loss.item()
