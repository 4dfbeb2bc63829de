"""Stochastic weight averaging collected at the end of each cycle of a cyclic LR schedule."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class SWAAverager:
    def __init__(self):
        self.avg_params = None
        self.n_averaged = 0

    def update(self, params):
        if self.avg_params is None:
            self.avg_params = [copy.deepcopy(p.detach()) for p in params]
        else:
            n = self.n_averaged
            for a, p in zip(self.avg_params, params):
                a.mul_(n / (n + 1)).add_(p.detach(), alpha=1.0 / (n + 1))
        self.n_averaged += 1


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    sched = torch.optim.lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=2)
    swa = SWAAverager()
    swa_update = torch.compile(swa.update)
    for step in range(12):
        x = torch.randn(16, 4)
        loss = F.mse_loss(model(x), x.pow(2).sum(-1, keepdim=True))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if (step + 1) % 4 == 0:
            with torch.no_grad():
                swa_update(list(model.parameters()))
    print(swa.n_averaged, [a.shape for a in swa.avg_params])


if __name__ == "__main__":
    main()
