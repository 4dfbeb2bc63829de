"""Positional embeddings: rotary with a cos/sin cache, learned positions from a padding mask."""
import math

import torch
import torch.nn as nn


class RotaryEmbedding(nn.Module):
    def __init__(self, dim: int, base: float = 10000.0, max_len: int = 32):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.max_len = max_len

    def forward(self, x):
        seq_len = x.shape[-2]
        if seq_len > self.max_len:  # ok
            raise ValueError(f"sequence of {seq_len} exceeds {self.max_len}")
        t = torch.arange(seq_len, device=x.device, dtype=self.inv_freq.dtype)  # ok
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos()[None, :, :], emb.sin()[None, :, :]


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(q, k, cos, sin):
    if q.dim() != cos.dim():  # ok
        cos, sin = cos[:, None], sin[:, None]
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


class RotaryAttentionInput(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.rope = RotaryEmbedding(dim)
        self.proj = nn.Linear(dim, 2 * dim)

    def forward(self, x):
        q, k = self.proj(x).chunk(2, dim=-1)
        cos, sin = self.rope(x)
        return apply_rotary(q, k, cos, sin)


class LearnedPositions(nn.Module):
    """Positions counted from the attention mask (left padding), as in many decoder-only models."""

    def __init__(self, dim: int, max_positions: int = 64):
        super().__init__()
        self.table = nn.Embedding(max_positions, dim)
        self.scale = math.sqrt(dim)

    def forward(self, tokens_emb, attention_mask):
        position_ids = attention_mask.long().cumsum(-1) - 1
        position_ids = position_ids.clamp(min=0)  # ok
        longest = position_ids.max() + 1
        table = self.table(torch.arange(longest))  # expect: DYN403
        return tokens_emb * self.scale + table[position_ids]


class SinusoidalPositions(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        n = x.size(1)
        pos = torch.arange(n, dtype=torch.float32)[:, None]  # ok
        i = torch.arange(0, self.dim, 2, dtype=torch.float32)
        angle = pos / (10000 ** (i / self.dim))
        pe = torch.zeros(n, self.dim)  # ok
        pe[:, 0::2] = angle.sin()
        pe[:, 1::2] = angle.cos()
        return x + pe


def __dynlint_calls__():
    torch.manual_seed(0)
    torch.compile(RotaryAttentionInput(8))(torch.randn(2, 5, 8))
    mask = torch.tensor([[0, 1, 1, 1], [1, 1, 1, 1]])
    torch.compile(LearnedPositions(8))(torch.randn(2, 4, 8), mask)
    torch.compile(SinusoidalPositions(8))(torch.randn(2, 4, 8))
