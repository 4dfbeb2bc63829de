"""Tokenizer-free byte-level language model: byte embeddings, causal dilated convolutions, byte-wise softmax."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 256


def encode(text):
    return torch.tensor(list(text.encode("utf-8")), dtype=torch.long)


class CausalConvBlock(nn.Module):
    def __init__(self, dim, dilation):
        super().__init__()
        self.pad = 2 * dilation
        self.conv = nn.Conv1d(dim, 2 * dim, kernel_size=3, dilation=dilation)
        self.norm = nn.GroupNorm(1, dim)

    def forward(self, x):
        h = self.conv(F.pad(x, (self.pad, 0)))
        a, b = h.chunk(2, dim=1)
        return self.norm(x + a * torch.sigmoid(b))


class ByteLM(nn.Module):
    def __init__(self, dim=32, dilations=(1, 2, 4, 8)):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim)
        self.blocks = nn.ModuleList(CausalConvBlock(dim, d) for d in dilations)
        self.head = nn.Linear(dim, VOCAB)
        self.receptive_field = 1 + sum(2 * d for d in dilations)

    def forward(self, byte_ids):
        x = self.embed(byte_ids).transpose(1, 2)
        for blk in self.blocks:
            x = blk(x)
        return self.head(x.transpose(1, 2))

    def bits_per_byte(self, text):
        ids = encode(text)[None]
        logits = self(ids[:, :-1])
        nll = F.cross_entropy(logits.reshape(-1, VOCAB), ids[:, 1:].reshape(-1))
        return nll.item() / math.log(2)
