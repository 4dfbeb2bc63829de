import torch
import torch.nn as nn

from .blocks import C2f, Conv
from .head import Detect


class DetectionModel(nn.Module):
    def __init__(self, nc=4):
        super().__init__()
        self.stem = nn.Sequential(Conv(3, 8, 3, 2), Conv(8, 16, 3, 2), C2f(16, 16), Conv(16, 16, 3, 2))
        self.p4 = nn.Sequential(Conv(16, 32, 3, 2), C2f(32, 32))
        self.p5 = nn.Sequential(Conv(32, 64, 3, 2), C2f(64, 64))
        self.detect = Detect(nc, ch=(16, 32, 64))

    def forward(self, x):
        p3 = self.stem(x)
        p4 = self.p4(p3)
        p5 = self.p5(p4)
        return self.detect([p3, p4, p5])


def main():
    torch.manual_seed(0)
    model = DetectionModel()
    compiled = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    feats = compiled(torch.randn(2, 3, 64, 64))
    loss = sum(f.mean() for f in feats)
    loss.backward()
    opt.step()
    model.eval()
    with torch.no_grad():
        for size in (64, 64, 96, 64):
            preds, _ = compiled(torch.randn(1, 3, size, size))
            assert preds.shape[1] == 4 + 4
        model.detect.export = True
        compiled(torch.randn(1, 3, 64, 64))
