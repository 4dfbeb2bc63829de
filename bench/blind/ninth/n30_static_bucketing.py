"""Seq2seq encoder compiled with dynamic=False, fed length-bucketed batches (bucket boundaries of 8)."""
import math
import random

import torch
import torch.nn as nn


class SinusoidalPositionalEmbedding(nn.Module):
    def __init__(self, dim, max_len=256):
        super().__init__()
        pe = torch.zeros(max_len, dim)
        pos = torch.arange(max_len).unsqueeze(1).float()
        div = torch.exp(torch.arange(0, dim, 2).float() * (-math.log(10000.0) / dim))
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe, persistent=False)

    def forward(self, x):
        return x + self.pe[: x.size(1)]


class Encoder(nn.Module):
    def __init__(self, vocab=100, d=16, layers=2, pad_idx=0):
        super().__init__()
        self.pad_idx = pad_idx
        self.embed = nn.Embedding(vocab, d, padding_idx=pad_idx)
        self.pos = SinusoidalPositionalEmbedding(d)
        self.layers = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(d, 2, 32, dropout=0.0, batch_first=True), layers, enable_nested_tensor=False)

    def forward(self, src):
        pad_mask = src.eq(self.pad_idx)
        x = self.pos(self.embed(src) * math.sqrt(self.embed.embedding_dim))
        return self.layers(x, src_key_padding_mask=pad_mask), pad_mask


def bucket_batches(lengths, bucket=8, batch_size=4):
    buckets = {}
    for i, n in enumerate(lengths):
        buckets.setdefault(math.ceil(n / bucket) * bucket, []).append(i)
    out = []
    for width in sorted(buckets):
        idx = buckets[width]
        for j in range(0, len(idx), batch_size):
            out.append((width, idx[j:j + batch_size]))
    return out


def main():
    torch.manual_seed(0)
    random.seed(0)
    enc = Encoder().eval()
    cenc = torch.compile(enc, dynamic=False)
    lengths = [random.randint(3, 40) for _ in range(40)]
    total = 0.0
    with torch.no_grad():
        for width, idx in bucket_batches(lengths):
            src = torch.zeros(4, width, dtype=torch.long)
            for r, i in enumerate(idx):
                src[r, : lengths[i]] = torch.randint(1, 100, (lengths[i],))
            out, mask = cenc(src)
            total += out.masked_fill(mask.unsqueeze(-1), 0).abs().sum().item()
    return total


if __name__ == "__main__":
    print(main())
