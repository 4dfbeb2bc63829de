"""A small network, a manual-SGD trainer and a weighted-sum helper used across a training run."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.drop = nn.Dropout(0.1)
        self.bn = nn.BatchNorm1d(6)
        self.history = []
        self.epoch = 0

    def forward(self, x):
        h = self.bn(self.fc(x))
        if self.training:
            h = self.drop(h)
        if self.epoch < 2:
            h = h.detach() + h - h.detach()
        return h.relu()


class Trainer:
    def __init__(self, model):
        self.model = model
        self.lr = 0.1
        self.losses = []

    def step(self, x, y):
        out = self.model(x)
        loss = (out - y).pow(2).mean()
        self.losses.append(loss.detach())
        with torch.no_grad():
            for p in self.model.parameters():
                if p.grad is not None:
                    p -= self.lr * p.grad
        return loss


def weighted_sum(x, **weights):
    total = torch.zeros(())
    for name, w in weights.items():
        total = total + w * x.sum()
    return total


def main():
    torch.manual_seed(0)
    net = Net()
    net.compile(backend="eager")
    net.train()
    net(torch.randn(4, 6))
    net.eval()
    net(torch.randn(4, 6))
    net.epoch = 3
    net(torch.randn(4, 6))
    with torch.no_grad():
        net(torch.randn(4, 6))

    tr = Trainer(nn.Linear(6, 6))
    st = torch.compile(tr.step, backend="eager")
    st(torch.randn(4, 6), torch.randn(4, 6))
    tr.lr = 0.05
    st(torch.randn(4, 6), torch.randn(4, 6))
    tr.losses.clear()
    st(torch.randn(4, 6), torch.randn(4, 6))

    ws = torch.compile(weighted_sum, backend="eager")
    ws(torch.randn(3), a=1.0)
    ws(torch.randn(3), a=1.0, b=0.5)
