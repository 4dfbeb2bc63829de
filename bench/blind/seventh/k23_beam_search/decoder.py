import torch
import torch.nn as nn

from . import settings


class TinyDecoder(nn.Module):
    def __init__(self, vocab=12, hidden=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, hidden)
        self.cell = nn.GRUCell(hidden, hidden)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, tokens, h):
        h = self.cell(self.emb(tokens), h)
        return self.out(h).log_softmax(-1), h


def beam_step(log_probs, beam_scores, cur_len):
    vocab = log_probs.shape[-1]
    scores = beam_scores[:, None] + log_probs
    flat = scores.view(-1)
    top_scores, top_idx = flat.topk(2 * settings.NUM_BEAMS)
    beam_idx = top_idx // vocab
    token_idx = top_idx % vocab
    normed = top_scores / (cur_len ** settings.LENGTH_PENALTY)
    is_eos = token_idx == settings.EOS_ID
    finished = [(int(b), float(s)) for b, s in zip(beam_idx[is_eos].tolist(), normed[is_eos].tolist())]
    keep = (~is_eos).nonzero().squeeze(-1)[: settings.NUM_BEAMS]
    return beam_idx[keep], token_idx[keep], top_scores[keep], finished
