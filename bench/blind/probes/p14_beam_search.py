"""Beam search decoding for a GRU seq2seq decoder; the whole search function is compiled."""
from dataclasses import dataclass, field
from typing import List

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Hypothesis:
    tokens: List[int]
    score: float
    finished: bool = False


class GRUDecoder(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.cell = nn.GRUCell(dim, dim)
        self.proj = nn.Linear(dim, vocab)

    def step(self, tokens, h):
        h = self.cell(self.emb(tokens), h)
        return F.log_softmax(self.proj(h), dim=-1), h


@torch.compile
def beam_search(decoder, h0, bos, eos, beam_size=3, max_len=6, length_penalty=0.6):
    h = h0.expand(beam_size, -1).contiguous()
    tokens = torch.full((beam_size,), bos, dtype=torch.long)
    scores = torch.zeros(beam_size)
    scores[1:] = float("-inf")
    history = []
    finished: List[Hypothesis] = []
    for step in range(max_len):
        logp, h = decoder.step(tokens, h)
        vocab = logp.size(-1)
        cand = (scores[:, None] + logp).view(-1)
        top_scores, top_idx = cand.topk(beam_size)
        beam_idx = torch.div(top_idx, vocab, rounding_mode="floor")
        tokens = top_idx % vocab
        h = h[beam_idx]
        history = [prev + [t] for prev, t in zip([history[i] for i in beam_idx.tolist()] if history else [[]] * beam_size, tokens.tolist())]
        scores = top_scores
        is_eos = tokens == eos
        if is_eos.any():
            for b in is_eos.nonzero().flatten():
                lp = ((5 + step + 1) / 6) ** length_penalty
                finished.append(Hypothesis(history[b], float(scores[b]) / lp, True))
            scores = scores.masked_fill(is_eos, float("-inf"))
        if len(finished) >= beam_size:
            break
    for b in range(beam_size):
        finished.append(Hypothesis(history[b], scores[b].item()))
    return sorted(finished, key=lambda hyp: hyp.score, reverse=True)[0]


def main():
    torch.manual_seed(0)
    dec = GRUDecoder(vocab=12, dim=16)
    results = []
    for _ in range(2):
        h0 = torch.randn(1, 16)
        results.append(beam_search(dec, h0, bos=1, eos=2))
    return [r.tokens for r in results]


if __name__ == "__main__":
    print(main())
