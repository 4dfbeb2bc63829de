"""Custom pre-norm transformer encoder for classification (not HF); config dataclass; model.compile(). Clean."""
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class EncoderConfig:
    vocab: int = 50
    dim: int = 32
    heads: int = 4
    layers: int = 2
    ffn_mult: int = 4
    max_len: int = 32
    num_classes: int = 3
    dropout: float = 0.0


class Attention(nn.Module):
    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.h = cfg.heads
        self.qkv = nn.Linear(cfg.dim, 3 * cfg.dim)
        self.o = nn.Linear(cfg.dim, cfg.dim)

    def forward(self, x, key_mask):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.h, d // self.h).unbind(2)
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))
        attn_mask = key_mask[:, None, None, :]
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
        return self.o(y.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(cfg.dim), nn.LayerNorm(cfg.dim)
        self.attn = Attention(cfg)
        self.ffn = nn.Sequential(nn.Linear(cfg.dim, cfg.ffn_mult * cfg.dim), nn.GELU(),
                                 nn.Linear(cfg.ffn_mult * cfg.dim, cfg.dim), nn.Dropout(cfg.dropout))

    def forward(self, x, key_mask):
        x = x + self.attn(self.n1(x), key_mask)
        return x + self.ffn(self.n2(x))


class Encoder(nn.Module):
    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.cfg = cfg
        self.tok = nn.Embedding(cfg.vocab, cfg.dim, padding_idx=0)
        self.register_buffer("pos", self._sinusoid(cfg.max_len, cfg.dim), persistent=False)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.layers)])
        self.norm = nn.LayerNorm(cfg.dim)
        self.cls = nn.Linear(cfg.dim, cfg.num_classes)

    @staticmethod
    def _sinusoid(n, d):
        pos = torch.arange(n)[:, None].float()
        div = torch.exp(torch.arange(0, d, 2).float() * (-math.log(10000.0) / d))
        pe = torch.zeros(n, d)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
        return pe

    def forward(self, ids):
        key_mask = ids != 0
        x = self.tok(ids) + self.pos[: ids.size(1)]
        for blk in self.blocks:
            x = blk(x, key_mask)
        x = self.norm(x)
        pooled = (x * key_mask[..., None]).sum(1) / key_mask.sum(1, keepdim=True).clamp(min=1)
        return self.cls(pooled)


def main():
    torch.manual_seed(0)
    model = Encoder(EncoderConfig()).eval()
    model.compile()
    with torch.no_grad():
        for _ in range(3):
            ids = torch.randint(1, 50, (4, 16))
            ids[:, 12:] = 0
            logits = model(ids)
    return logits.shape


if __name__ == "__main__":
    print(main())
