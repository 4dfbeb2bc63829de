import copy

import torch

from . import hooks
from .module import Denoiser


class EarlyStopper:
    def __init__(self, patience=1, mode="max"):
        self.patience, self.mode = patience, mode
        self.best, self.wait = None, 0

    def improved(self, value):
        if self.best is None:
            return True
        return value > self.best if self.mode == "max" else value < self.best

    def step(self, value):
        if self.improved(value):
            self.best, self.wait = value, 0
            return False
        self.wait += 1
        return self.wait > self.patience


def fit(module, train, val, max_epochs=3):
    opt = torch.optim.Adam(module.parameters(), lr=1e-3)
    train_step = torch.compile(module.training_step)
    val_step = torch.compile(module.validation_step)
    stopper, best_state = EarlyStopper(), None
    for epoch in range(max_epochs):
        module.current_epoch = epoch
        module.train()
        for i, batch in enumerate(train):
            loss = train_step(batch, i)
            opt.zero_grad()
            loss.backward()
            opt.step()
        module.eval()
        if epoch == max_epochs - 1:
            hooks.DEBUG_DUMPS = True  # keep a few reconstructions from the final epoch
        with torch.no_grad():
            for i, batch in enumerate(val):
                val_step(batch, i)
        metrics = module.epoch_metrics()
        if stopper.improved(float(metrics["val_psnr"])):
            best_state = copy.deepcopy(module.state_dict())
        if stopper.step(float(metrics["val_psnr"])):
            break
    return best_state, stopper.best


def main():
    torch.manual_seed(0)
    train = [torch.rand(4, 1, 12, 12) for _ in range(3)]
    val = [torch.rand(4, 1, 12, 12) for _ in range(2)]
    module = Denoiser()
    best_state, best = fit(module, train, val)
    return best, len(module.dumped)
