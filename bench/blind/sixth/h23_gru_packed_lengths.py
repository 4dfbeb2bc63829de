"""Hand-rolled GRU encoder over padded variable-length batches (sentiment-style classifier)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

PAD = 0


class GRUEncoder(nn.Module):
    def __init__(self, vocab=50, emb=16, hidden=24, n_classes=3, bidirectional=False):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb, padding_idx=PAD)
        self.cell = nn.GRUCell(emb, hidden)
        self.hidden = hidden
        self.bidirectional = bidirectional
        self.cls = nn.Linear(hidden, n_classes)

    def run(self, x, lengths, h0=None):
        B = x.shape[0]
        h = x.new_zeros(B, self.hidden) if h0 is None else h0
        max_len = int(lengths.max())
        for t in range(max_len):
            h_new = self.cell(x[:, t], h)
            alive = (t < lengths).float()[:, None]
            h = alive * h_new + (1 - alive) * h
        return h

    def forward(self, tokens, h0=None):
        lengths = (tokens != PAD).sum(1)
        h = self.run(self.emb(tokens), lengths, h0)
        return self.cls(h), h


def pad_batch(seqs):
    L = max(len(s) for s in seqs)
    out = torch.full((len(seqs), L), PAD, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, :len(s)] = torch.tensor(s)
    return out


def random_docs(n, gen):
    docs = []
    for _ in range(n):
        L = int(torch.randint(3, 9, (1,), generator=gen))
        docs.append(torch.randint(1, 50, (L,), generator=gen).tolist())
    return docs


def main():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    model = GRUEncoder()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    model = torch.compile(model)
    for _ in range(3):
        tokens = pad_batch(random_docs(8, gen))
        labels = torch.randint(0, 3, (8,), generator=gen)
        logits, _ = model(tokens)
        loss = F.cross_entropy(logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    # dialogue: encode turns sequentially, threading the hidden state
    h = None
    with torch.no_grad():
        for turn in random_docs(3, gen):
            logits, h = model(pad_batch([turn]), h)
    return logits.softmax(-1)
