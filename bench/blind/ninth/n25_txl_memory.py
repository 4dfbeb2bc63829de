"""Transformer-XL style segment-level recurrence: a list of cached hidden states grows up to mem_len."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


class RelLayer(nn.Module):
    def __init__(self, d_model=16, n_head=2, d_inner=32):
        super().__init__()
        self.n_head, self.d_head = n_head, d_model // n_head
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.o = nn.Linear(d_model, d_model, bias=False)
        self.ln1 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, d_inner), nn.ReLU(), nn.Linear(d_inner, d_model))
        self.ln2 = nn.LayerNorm(d_model)

    def forward(self, h, mem):
        cat = torch.cat([mem, h], dim=1) if mem is not None else h
        bsz, klen, d = cat.shape
        qlen = h.shape[1]
        q, k, v = self.qkv(cat).chunk(3, dim=-1)
        q = q[:, -qlen:].view(bsz, qlen, self.n_head, self.d_head).transpose(1, 2)
        k = k.view(bsz, klen, self.n_head, self.d_head).transpose(1, 2)
        v = v.view(bsz, klen, self.n_head, self.d_head).transpose(1, 2)
        mask = torch.ones(qlen, klen, dtype=torch.bool).triu(diagonal=1 + klen - qlen)
        att = (q @ k.transpose(-1, -2)) / self.d_head ** 0.5
        att = att.masked_fill(mask, float("-inf")).softmax(-1)
        out = (att @ v).transpose(1, 2).reshape(bsz, qlen, d)
        h = self.ln1(h + self.o(out))
        return self.ln2(h + self.ff(h))


class MemTransformerLM(nn.Module):
    def __init__(self, vocab=40, d_model=16, n_layer=2, mem_len=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.layers = nn.ModuleList([RelLayer(d_model) for _ in range(n_layer)])
        self.out = nn.Linear(d_model, vocab)
        self.mem_len = mem_len  # number of past segments kept
        self.mems = []          # list of per-segment [n_layer, B, L, D] tensors

    def reset_memory(self):
        self.mems = []

    def _gather_mems(self):
        if not self.mems:
            return [None] * len(self.layers)
        stacked = torch.cat(self.mems, dim=2)
        return [stacked[i] for i in range(len(self.layers))]

    def forward(self, tokens):
        h = self.embed(tokens)
        hids = []
        mems = self._gather_mems()
        for layer, mem in zip(self.layers, mems):
            hids.append(h)
            h = layer(h, mem)
        return self.out(h), torch.stack(hids).detach()

    def update_memory(self, new_hids):
        self.mems.append(new_hids)
        self.mems = self.mems[-self.mem_len:]


def main():
    torch.manual_seed(0)
    random.seed(0)
    model = MemTransformerLM()
    step = torch.compile(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    tgt_len = 6
    stream = torch.randint(0, 40, (2, tgt_len * 7 + 1))
    for i in range(7):
        seg = stream[:, i * tgt_len:(i + 1) * tgt_len + 1]
        logits, hids = step(seg[:, :-1])
        model.update_memory(hids)
        loss = F.cross_entropy(logits.flatten(0, 1), seg[:, 1:].flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


if __name__ == "__main__":
    print(main())
