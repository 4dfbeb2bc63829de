"""Metrics and safety checks that read tensor values on the host."""
import math

import torch
import torch.nn as nn


class Perplexity(nn.Module):
    def forward(self, loss):
        return math.exp(loss)  # expect: DYN205


class SafeDivide(nn.Module):
    def forward(self, num, den):
        if bool(den.abs().min() < 1e-12):  # expect: DYN202
            den = den + 1e-12
        return num / den


class Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        y = self.proj(x)
        if y.data_ptr() == x.data_ptr():  # expect: DYN204
            y = y.clone()
        same = torch.equal(x, y)  # expect: DYN105
        return x + y, same


class InputChecks(nn.Module):
    def forward(self, x, mask):
        has_negative = any(x.flatten() < 0)  # expect: DYN104
        clean = not torch.isnan(x).any()  # expect: DYN102
        valid = mask.bool() & (x > -1e4)  # ok
        return torch.where(valid, x, 0.0), has_negative, clean


class Normalizer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(()))

    def forward(self, x):
        n = x.shape[0]
        scale = 1.0 / math.sqrt(n)  # ok
        total = float(x.sum())  # expect: DYN202
        self.count += n  # ok
        return x * scale / (abs(total) + 1.0), n  # expect: DYN510


def __dynlint_calls__():
    torch.manual_seed(0)
    torch.compile(Perplexity())(torch.tensor(2.0))
    torch.compile(SafeDivide())(torch.ones(3), torch.ones(3))
    torch.compile(Residual())(torch.randn(2, 4))
    torch.compile(InputChecks())(torch.randn(3), torch.tensor([1, 0, 1]))
    norm = torch.compile(Normalizer())
    norm(torch.randn(3))
    norm(torch.randn(3) + 1.0)          # another total: the resumed code's guard fails
