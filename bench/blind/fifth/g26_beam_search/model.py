"""A tiny decoder-only transformer with a per-layer key/value cache."""
import math
from typing import Dict, List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = dim // n_heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, layer_cache: Optional[Dict[str, torch.Tensor]] = None):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=-1)
        q = q.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        k = k.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        v = v.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        if layer_cache is not None:
            if "k" in layer_cache:
                k = torch.cat([layer_cache["k"], k], dim=2)
                v = torch.cat([layer_cache["v"], v], dim=2)
            layer_cache["k"], layer_cache["v"] = k, v
        S = k.shape[2]
        att = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        causal = torch.ones(T, S, dtype=torch.bool).tril(diagonal=S - T)
        att = att.masked_fill(~causal, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, dim, n_heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, n_heads)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, layer_cache=None):
        x = x + self.attn(self.ln1(x), layer_cache)
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab=40, dim=32, n_layers=2, n_heads=4, max_len=64):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.blocks = nn.ModuleList(Block(dim, n_heads) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids, past_length: int = 0, cache: Optional[List[Dict[str, torch.Tensor]]] = None):
        T = input_ids.shape[1]
        pos = torch.arange(past_length, past_length + T)
        x = self.tok(input_ids) + self.pos(pos)
        for i, block in enumerate(self.blocks):
            x = block(x, cache[i] if cache is not None else None)
        return F.log_softmax(self.head(self.ln_f(x[:, -1])), dim=-1)


def reorder_cache(cache: List[Dict[str, torch.Tensor]], beam_idx: torch.Tensor):
    for layer in cache:
        for key in list(layer):
            layer[key] = layer[key].index_select(0, beam_idx)
    return cache
