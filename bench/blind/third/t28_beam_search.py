"""Beam search decoding for a small GRU seq2seq model, with length penalty and early stopping on EOS."""
import torch
import torch.nn as nn

BOS, EOS, PAD = 1, 2, 0


class Seq2Seq(nn.Module):
    def __init__(self, vocab=20, dim=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.enc = nn.GRU(dim, dim, batch_first=True)
        self.dec = nn.GRUCell(dim, dim)
        self.out = nn.Linear(dim, vocab)

    def encode(self, src):
        _, h = self.enc(self.emb(src))
        return h[0]

    def decode_step(self, tokens, h):
        h = self.dec(self.emb(tokens), h)
        return self.out(h).log_softmax(-1), h


def beam_search(model, src, beam_size=3, max_len=6, length_penalty=0.6):
    h = model.encode(src).repeat_interleave(beam_size, dim=0)
    vocab = model.out.out_features
    scores = torch.zeros(beam_size)
    scores[1:] = float("-inf")
    tokens = torch.full((beam_size, 1), BOS, dtype=torch.long)
    finished = []
    for step in range(max_len):
        logp, h = model.decode_step(tokens[:, -1], h)
        cand = (scores[:, None] + logp).view(-1)
        top_scores, top_idx = cand.topk(beam_size)
        beam_idx = top_idx // vocab
        tok_idx = top_idx % vocab
        tokens = torch.cat([tokens[beam_idx], tok_idx[:, None]], dim=1)
        h = h[beam_idx]
        scores = top_scores
        is_eos = tok_idx == EOS
        for b in torch.nonzero(is_eos).flatten().tolist():
            lp = ((5 + tokens.shape[1]) / 6) ** length_penalty
            finished.append((scores[b].item() / lp, tokens[b].tolist()))
        scores = scores.masked_fill(is_eos, float("-inf"))
        if len(finished) >= beam_size or torch.isinf(scores).all():
            break
    if not finished:
        best = scores.argmax()
        return tokens[best].tolist()
    return max(finished)[1]


def main():
    torch.manual_seed(0)
    model = Seq2Seq().eval()
    search = torch.compile(beam_search, backend="eager")
    with torch.no_grad():
        for src_len, beam in ((5, 3), (7, 3), (5, 4)):
            src = torch.randint(3, 20, (1, src_len))
            search(model, src, beam_size=beam)
