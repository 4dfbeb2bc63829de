"""Autoregressive decoding loops (greedy) for a small GRU language model."""
import torch
import torch.nn as nn


class TinyLM(nn.Module):
    def __init__(self, vocab: int = 12, dim: int = 8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.cell = nn.GRUCell(dim, dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens, h):
        h = self.cell(self.embed(tokens), h)
        return self.head(h), h


@torch.compile
def greedy_until_eos(model, start, h, eos: int = 0, max_len: int = 6):
    tokens = start
    out = [tokens]
    finished = torch.zeros_like(tokens, dtype=torch.bool)
    step = 0
    while not finished.all():  # expect: DYN101
        logits, h = model(tokens, h)
        tokens = logits.argmax(-1)
        finished |= tokens == eos
        out.append(tokens)
        step += 1
        if step >= max_len:  # ok
            break
    return torch.stack(out, 1)


@torch.compile
def greedy_fixed(model, start, h, steps: int):
    tokens = start
    out = []
    for _ in range(steps):  # expect: DYN501, DYN502
        logits, h = model(tokens, h)
        tokens = logits.argmax(-1)
        out.append(tokens)
    return torch.stack(out, 1)


@torch.compile
def decode_to_lists(model, start, h):
    logits, h = model(start, h)
    best = logits.argmax(-1)
    return best.tolist()  # expect: DYN203


def __dynlint_calls__():
    torch.manual_seed(0)
    model = TinyLM()
    start = torch.tensor([1, 2])
    h = torch.zeros(2, 8)
    greedy_until_eos(model, start, h)
    for n in (2, 3, 4):  # ok
        greedy_fixed(model, start, h, steps=n)
    decode_to_lists(model, start, h)
