"""Multi-head self-attention with padding and causal masks, and a KV cache for decoding."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, dim: int, heads: int, dropout: float = 0.0, causal: bool = False):
        super().__init__()
        assert dim % heads == 0
        self.heads = heads
        self.head_dim = dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.dropout = dropout
        self.causal = causal
        self.scale = 1.0 / math.sqrt(self.head_dim)

    def forward(self, x, padding_mask=None):
        b, t, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(b, t, self.heads, self.head_dim).transpose(1, 2)
        v = v.view(b, t, self.heads, self.head_dim).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) * self.scale
        if self.causal:  # ok
            causal = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
            scores = scores.masked_fill(~causal, float("-inf"))
        if padding_mask is not None:  # ok
            if padding_mask.dtype != torch.bool:  # ok
                padding_mask = padding_mask > 0
            scores = scores.masked_fill(~padding_mask[:, None, None, :], float("-inf"))
            if not padding_mask.any(dim=-1).all():  # expect: DYN101
                scores = scores.nan_to_num(neginf=-1e4)
        attn = scores.softmax(dim=-1)
        if self.training and self.dropout > 0:  # ok
            attn = F.dropout(attn, self.dropout)
        out = (attn @ v).transpose(1, 2).reshape(b, t, d)
        return self.out(out)


class KVCache(nn.Module):
    """Appends keys/values step by step; the cache length is kept as a Python int (a recompile hazard)."""

    def __init__(self, dim: int, max_len: int = 16):
        super().__init__()
        self.register_buffer("k", torch.zeros(1, max_len, dim))
        self.register_buffer("v", torch.zeros(1, max_len, dim))
        self.length = 0

    def forward(self, k_new, v_new):
        t = k_new.shape[1]
        if self.length + t > self.k.shape[1]:  # ok
            raise ValueError("cache full")
        self.k[:, self.length:self.length + t] = k_new
        self.v[:, self.length:self.length + t] = v_new
        self.length += t  # expect: DYN306
        return self.k[:, :self.length], self.v[:, :self.length]


class Block(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = MultiHeadAttention(dim, heads, dropout=0.1, causal=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, padding_mask=None):  # expect: DYN505
        x = x + self.attn(self.norm1(x), padding_mask)
        x = x + self.mlp(self.norm2(x))
        if x.isnan().any():  # expect: DYN101
            x = torch.nan_to_num(x)
        return x


def __dynlint_calls__():
    torch.manual_seed(0)
    block = torch.compile(Block(16, 4).eval())
    x = torch.randn(2, 5, 16)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)
    block(x, mask)
    block(x)
    cache = torch.compile(KVCache(8))
    for _ in range(3):
        cache(torch.ones(1, 1, 8), torch.ones(1, 1, 8))
