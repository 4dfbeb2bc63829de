"""Normalisation layers: RMSNorm, a batch norm with running statistics, and a weight-standardised conv."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        if x.dtype in (torch.float16, torch.bfloat16):  # ok
            x = x.float()
        rms = x.pow(2).mean(-1, keepdim=True).add(self.eps).rsqrt()
        return x * rms * self.weight


class RunningBatchNorm(nn.Module):
    def __init__(self, dim: int, momentum: float = 0.1, eps: float = 1e-5):
        super().__init__()
        self.register_buffer("running_mean", torch.zeros(dim))
        self.register_buffer("running_var", torch.ones(dim))
        self.register_buffer("num_batches_tracked", torch.zeros((), dtype=torch.long))
        self.momentum = momentum
        self.eps = eps

    def forward(self, x):
        if self.training:  # ok
            mean = x.mean(0)
            var = x.var(0, unbiased=False)
            with torch.no_grad():  # ok
                self.running_mean.lerp_(mean, self.momentum)
                self.running_var.lerp_(var, self.momentum)
                self.num_batches_tracked += 1  # ok
        else:
            mean, var = self.running_mean, self.running_var
        return (x - mean) / torch.sqrt(var + self.eps)


class ScaleNorm(nn.Module):
    """Normalises by the global norm, written with Python math on a tensor."""

    def __init__(self, dim: int):
        super().__init__()
        self.g = nn.Parameter(torch.tensor(math.sqrt(dim)))  # ok

    def forward(self, x):
        norm = x.norm(dim=-1, keepdim=True).clamp(min=1e-5)
        spread = math.sqrt(x.var())  # expect: DYN205
        return self.g * x / norm / spread  # expect: DYN510


class WSConv2d(nn.Conv2d):
    """Weight-standardised convolution."""

    def forward(self, x):
        w = self.weight
        if w.std() == 0:  # expect: DYN101
            return F.conv2d(x, w, self.bias, self.stride, self.padding)
        w = (w - w.mean(dim=(1, 2, 3), keepdim=True)) / (w.std(dim=(1, 2, 3), keepdim=True) + 1e-5)
        return F.conv2d(x, w, self.bias, self.stride, self.padding)


class AdaptiveNorm(nn.Module):
    """Chooses between layer norm and group norm from the input rank (static: decided while tracing)."""

    def __init__(self, channels: int, groups: int = 2):
        super().__init__()
        self.ln = nn.LayerNorm(channels)
        self.gn = nn.GroupNorm(groups, channels)

    def forward(self, x):
        if x.dim() == 4:  # ok
            return self.gn(x)
        if x.shape[-1] != self.ln.normalized_shape[0]:  # ok
            raise ValueError("channel mismatch")
        return self.ln(x)


def __dynlint_calls__():
    torch.manual_seed(0)
    torch.compile(RMSNorm(8))(torch.randn(2, 8))
    bn = torch.compile(RunningBatchNorm(8))
    bn(torch.randn(4, 8))
    torch.compile(ScaleNorm(8))(torch.randn(2, 8))
    torch.compile(WSConv2d(3, 4, 3))(torch.randn(1, 3, 8, 8))
    norm = torch.compile(AdaptiveNorm(4))
    norm(torch.randn(2, 4, 5, 5))
