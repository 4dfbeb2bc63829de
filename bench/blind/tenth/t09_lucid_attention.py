"""lucidrains-style attention stack with optional context / mask / rotary kwargs and exists/default helpers."""
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F


def exists(val):
    return val is not None


def default(val, d):
    return val if exists(val) else d


def split_heads(t, h):
    b, n, hd = t.shape
    return t.reshape(b, n, h, hd // h).transpose(1, 2)


def merge_heads(t):
    b, h, n, d = t.shape
    return t.transpose(1, 2).reshape(b, n, h * d)


class RotaryEmbedding(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)))

    def forward(self, seq_len):
        t = torch.arange(seq_len, dtype=self.inv_freq.dtype)
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        return torch.cat((freqs, freqs), dim=-1)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(pos, t):
    return t * pos.cos() + rotate_half(t) * pos.sin()


class Attention(nn.Module):
    def __init__(self, dim, heads=4, dim_head=16, causal=False):
        super().__init__()
        inner = heads * dim_head
        self.heads = heads
        self.causal = causal
        self.norm = nn.LayerNorm(dim)
        self.to_q = nn.Linear(dim, inner, bias=False)
        self.to_kv = nn.Linear(dim, inner * 2, bias=False)
        self.to_out = nn.Linear(inner, dim, bias=False)

    def forward(self, x, context=None, mask=None, rotary_emb=None):
        x = self.norm(x)
        kv_input = default(context, x)
        q = split_heads(self.to_q(x), self.heads)
        k, v = (split_heads(t, self.heads) for t in self.to_kv(kv_input).chunk(2, dim=-1))
        if exists(rotary_emb):
            q, k = map(partial(apply_rotary_pos_emb, rotary_emb), (q, k))
        attn_mask = None
        if exists(mask):
            attn_mask = mask[:, None, None, :]
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=self.causal and not exists(context))
        return self.to_out(merge_heads(out))


class Transformer(nn.Module):
    def __init__(self, dim=64, depth=2, cross_attend=False, use_rotary=True):
        super().__init__()
        self.rotary = RotaryEmbedding(16) if use_rotary else None
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([
                Attention(dim),
                Attention(dim) if cross_attend else None,
                nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim * 4), nn.GELU(), nn.Linear(dim * 4, dim)),
            ]))

    def forward(self, x, context=None, mask=None, context_mask=None):
        rotary = self.rotary(x.shape[1]) if exists(self.rotary) else None
        for self_attn, cross_attn, ff in self.layers:
            x = self_attn(x, mask=mask, rotary_emb=rotary) + x
            if exists(cross_attn) and exists(context):
                x = cross_attn(x, context=context, mask=context_mask) + x
            x = ff(x) + x
        return x


def main():
    torch.manual_seed(0)
    net = torch.compile(Transformer(cross_attend=True))
    x = torch.randn(2, 10, 64)
    ctx = torch.randn(2, 6, 64)
    with torch.no_grad():
        net(x)
        net(x, mask=torch.ones(2, 10, dtype=torch.bool))
        net(x, context=ctx)
        net(x, context=ctx, context_mask=torch.tensor([[True] * 6, [True] * 4 + [False] * 2]))


if __name__ == "__main__":
    main()
