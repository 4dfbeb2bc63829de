"""Autoregressive decoding with a growing KV cache; the decoder step is compiled with torch.compile(model)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, cache=None, pos=0):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        if cache is not None:
            k = torch.cat([cache[0], k], dim=2)
            v = torch.cat([cache[1], v], dim=2)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(q.size(-1))
        if pos == 0 and t > 1:
            mask = torch.ones(t, t, dtype=torch.bool).tril()
            att = att.masked_fill(~mask, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return self.proj(y.transpose(1, 2).reshape(b, t, d)), (k, v)


class TinyLM(nn.Module):
    def __init__(self, vocab=32, dim=16, heads=2, layers=2, max_pos=64):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_pos, dim)
        self.blocks = nn.ModuleList([CausalSelfAttention(dim, heads) for _ in range(layers)])
        self.head = nn.Linear(dim, vocab)

    def forward(self, idx, caches=None, pos=0):
        t = idx.size(1)
        x = self.tok(idx) + self.pos(torch.arange(pos, pos + t))
        new_caches = []
        for i, blk in enumerate(self.blocks):
            y, c = blk(x, None if caches is None else caches[i], pos)
            x = x + y
            new_caches.append(c)
        return self.head(x[:, -1]), new_caches


@torch.no_grad()
def generate(model, prompt, max_new_tokens=5, temperature=1.0):
    step = torch.compile(model)
    logits, caches = step(prompt)
    out = prompt.tolist()[0]
    pos = prompt.size(1)
    for _ in range(max_new_tokens):
        probs = F.softmax(logits / temperature, dim=-1)
        nxt = torch.multinomial(probs, 1)
        out.append(nxt.item())
        logits, caches = step(nxt, caches, pos)
        pos += 1
    return out


def main():
    torch.manual_seed(0)
    model = TinyLM().eval()
    return generate(model, torch.randint(0, 32, (1, 4)))


if __name__ == "__main__":
    print(main())
