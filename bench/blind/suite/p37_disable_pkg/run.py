import torch
import torch.nn as nn

from .utils import gated, histogram_summary, sanity_check, sinusoid_table, sync_point


class Encoder(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.inp = nn.Linear(3, d)
        self.mix = nn.Linear(d, d)
        self.summaries = []

    def forward(self, x):
        h = self.inp(x)
        sanity_check(h)
        h = h + sinusoid_table(64, h.shape[-1])[: h.shape[0]]
        sync_point()
        out = self.mix(h)
        self.summaries.append(histogram_summary(out))
        return out


@gated
def project(x, w):
    return x @ w


def main():
    torch.manual_seed(0)
    enc = Encoder()
    enc.compile(backend="eager")
    enc(torch.randn(5, 3))
    enc(torch.randn(7, 3))

    pj = torch.compile(project, backend="eager")
    pj(torch.randn(2, 4), torch.randn(4, 4))
    pj(torch.randn(3, 4), torch.randn(4, 4))
