import torch
import torch.nn as nn

from .recorder import ActivationRecorder, channel_stats, scale_grad


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 4, 3, padding=1)
        self.c2 = nn.Conv2d(4, 4, 3, padding=1)
        self.rec = ActivationRecorder()
        self.record = False

    def forward(self, x):
        if self.record:
            self.rec.attach(self.c1, "c1")
        h = torch.relu(self.c1(x))
        h = scale_grad(h, 0.5)
        out = self.c2(h)
        if self.record:
            self.rec.detach_all()
        return out, channel_stats(out)


def main():
    torch.manual_seed(0)
    m = SmallCNN()
    m.compile(backend="eager")
    m(torch.randn(1, 3, 8, 8))
    m.record = True
    m(torch.randn(1, 3, 8, 8))
    m(torch.randn(2, 3, 8, 8, requires_grad=True))[0].sum().backward()
