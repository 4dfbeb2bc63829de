"""The model: blocks of attention + MLP, as users write them before turning on torch.compile."""
from dataclasses import dataclass

import torch
import torch.nn as nn

from tinygpt.layers import Attention, MoE, RMSNorm


@dataclass
class GPTConfig:
    vocab: int = 256
    dim: int = 64
    heads: int = 4
    layers: int = 2
    experts: int = 0
    max_len: int = 128
    debug: bool = False


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.norm1 = RMSNorm(cfg.dim)
        self.attn = Attention(cfg.dim, cfg.heads)
        self.norm2 = RMSNorm(cfg.dim)
        self.mlp = MoE(cfg.dim, cfg.experts) if cfg.experts else nn.Sequential(
            nn.Linear(cfg.dim, 4 * cfg.dim), nn.GELU(), nn.Linear(4 * cfg.dim, cfg.dim))
        self.debug = cfg.debug

    def forward(self, x, cos, sin, mask=None):
        x = x + self.attn(self.norm1(x), cos, sin, mask)
        if self.debug:                      # branching on a config flag is fine; the print breaks when it is on
            print("block output", x.shape)
        return x + self.mlp(self.norm2(x))


class TinyGPT(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab, cfg.dim)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.layers)])
        self.norm = RMSNorm(cfg.dim)
        self.head = nn.Linear(cfg.dim, cfg.vocab, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, cfg.dim // cfg.heads, 2).float() / (cfg.dim // cfg.heads)))
        self.register_buffer("inv_freq", inv)
        self.calls = 0

    def rope(self, t):
        pos = torch.arange(t, device=self.inv_freq.device).float()
        freqs = torch.outer(pos, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos(), emb.sin()

    def forward(self, tokens):
        self.calls += 1                     # an int attribute: every call recompiles
        x = self.embed(tokens)
        cos, sin = self.rope(tokens.shape[1])
        mask = torch.triu(torch.ones(tokens.shape[1], tokens.shape[1], dtype=torch.bool, device=tokens.device), 1)
        for block in self.blocks:
            x = block(x, cos, sin, mask)
        logits = self.head(self.norm(x))
        if self.training:                   # fine: a Python bool known while tracing
            logits = logits.float()
        return logits
