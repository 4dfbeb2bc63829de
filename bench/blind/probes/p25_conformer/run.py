"""Conformer encoder (macaron FFN, MHSA with padding mask, depthwise conv module) with activation checkpointing."""
import torch
import torch.nn as nn
import torch.utils.checkpoint as cp

from .utils import RelPositionalEncoding, make_pad_mask


class FeedForward(nn.Module):
    def __init__(self, d, mult=2, dropout=0.1):
        super().__init__()
        self.net = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, d * mult), nn.SiLU(), nn.Dropout(dropout),
                                 nn.Linear(d * mult, d))

    def forward(self, x):
        return self.net(x)


class ConvModule(nn.Module):
    def __init__(self, d, kernel=7):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.pw1 = nn.Conv1d(d, 2 * d, 1)
        self.dw = nn.Conv1d(d, d, kernel, padding=kernel // 2, groups=d)
        self.bn = nn.GroupNorm(1, d)
        self.pw2 = nn.Conv1d(d, d, 1)

    def forward(self, x, pad_mask):
        x = x.masked_fill(pad_mask[..., None], 0.0)
        x = self.norm(x).transpose(1, 2)
        x = nn.functional.glu(self.pw1(x), dim=1)
        x = self.pw2(nn.functional.silu(self.bn(self.dw(x))))
        return x.transpose(1, 2)


class ConformerLayer(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ff1, self.ff2 = FeedForward(d), FeedForward(d)
        self.attn_norm = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.pos_proj = nn.Linear(d, d, bias=False)
        self.conv = ConvModule(d)
        self.out_norm = nn.LayerNorm(d)

    def forward(self, x, pos_emb, pad_mask):
        x = x + 0.5 * self.ff1(x)
        h = self.attn_norm(x) + self.pos_proj(pos_emb)
        x = x + self.attn(h, h, h, key_padding_mask=pad_mask, need_weights=False)[0]
        x = x + self.conv(x, pad_mask)
        x = x + 0.5 * self.ff2(x)
        return self.out_norm(x)


class ConformerEncoder(nn.Module):
    def __init__(self, idim=10, d=16, heads=2, layers=2, gradient_checkpointing=True):
        super().__init__()
        self.embed = nn.Linear(idim, d)
        self.pos = RelPositionalEncoding(d)
        self.layers = nn.ModuleList([ConformerLayer(d, heads) for _ in range(layers)])
        self.gradient_checkpointing = gradient_checkpointing

    def forward(self, feats, lengths):
        pad_mask = make_pad_mask(lengths, feats.size(1))
        x, pos_emb = self.pos(self.embed(feats))
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                x = cp.checkpoint(layer, x, pos_emb, pad_mask, use_reentrant=False)
            else:
                x = layer(x, pos_emb, pad_mask)
        return x, (~pad_mask).sum(1)


def main():
    torch.manual_seed(0)
    enc = ConformerEncoder()
    enc_c = torch.compile(enc)
    for T in (12, 20, 24):
        feats = torch.randn(2, T, 10)
        lengths = torch.tensor([T, T - 3])
        out, out_lens = enc_c(feats, lengths)
        out.sum().backward()
    return out.shape
