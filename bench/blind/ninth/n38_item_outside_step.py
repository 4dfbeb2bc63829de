"""Char-level GRU language model: compiled train step; all .item()/logging happens outside of it."""
import logging
import math
import random
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger(__name__)

TEXT = "the quick brown fox jumps over the lazy dog. " * 20


class CharLM(nn.Module):
    def __init__(self, vocab, d=24, hidden=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.cell = nn.GRUCell(d, hidden)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, x, h):
        logits = []
        for t in range(x.shape[1]):
            h = self.cell(self.emb(x[:, t]), h)
            logits.append(self.out(h))
        return torch.stack(logits, dim=1), h


def make_step(model, opt, clip=1.0):
    @torch.compile
    def forward_loss(x, y, h):
        logits, h = model(x, h)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        return loss, h.detach()

    def step(x, y, h):
        loss, h = forward_loss(x, y, h)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        return loss.detach(), h

    return step


def main():
    torch.manual_seed(0)
    random.seed(0)
    chars = sorted(set(TEXT))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in TEXT])
    model = CharLM(len(chars))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    step = make_step(model, opt)
    bs, bptt = 4, 8
    n = (len(data) - 1) // (bs * bptt) * bs * bptt
    xs = data[:n].view(bs, -1)
    ys = data[1:n + 1].view(bs, -1)
    history = []
    t0 = time.perf_counter()
    for epoch in range(2):
        h = torch.zeros(bs, 32)
        for i in range(0, 4 * bptt, bptt):
            loss, h = step(xs[:, i:i + bptt], ys[:, i:i + bptt], h)
            history.append(loss.item())
            if i % (2 * bptt) == 0:
                log.info("epoch %d iter %d loss %.3f ppl %.1f", epoch, i, history[-1], math.exp(history[-1]))
    log.info("done in %.2fs", time.perf_counter() - t0)
    return history[-1]


if __name__ == "__main__":
    print(main())
