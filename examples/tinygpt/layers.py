"""Building blocks shared by the model. Helpers here are traced because model.py calls them."""
import logging
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(q, k, cos, sin):
    # shape checks are fine: shapes are known while tracing
    if q.shape[-1] % 2 != 0:
        raise ValueError("head dimension must be even")
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


def stable_softmax(scores):
    # a data-dependent check: Dynamo must stop the graph to evaluate it
    if torch.isnan(scores).any():
        logger.warning("NaN in attention scores")
        scores = torch.nan_to_num(scores)
    return F.softmax(scores, dim=-1)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        norm = x.pow(2).mean(-1, keepdim=True).add(self.eps).rsqrt()
        return x * norm * self.weight


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)

    def forward(self, x, cos, sin, mask=None):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q = q.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        q, k = apply_rope(q, k, cos, sin)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        attn = stable_softmax(scores)
        return self.out((attn @ v).transpose(1, 2).reshape(b, t, d))


class MoE(nn.Module):
    """Top-1 mixture of experts with value-dependent routing."""

    def __init__(self, dim, experts):
        super().__init__()
        self.router = nn.Linear(dim, experts)
        self.experts = nn.ModuleList([nn.Linear(dim, dim) for _ in range(experts)])

    def forward(self, x):
        choice = self.router(x).argmax(-1)
        out = torch.zeros_like(x)
        for i, expert in enumerate(self.experts):
            rows = torch.nonzero(choice == i, as_tuple=True)
            out[rows] = expert(x[rows])
        return out


def bias_gelu(x, bias):
    """The tanh GELU after a bias add: a chain of pointwise ops Inductor fuses into one kernel."""
    y = x + bias
    return y * 0.5 * (1.0 + torch.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))
