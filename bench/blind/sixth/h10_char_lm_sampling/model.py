import torch
import torch.nn as nn

VOCAB = sorted(set("abcdefghijklmnopqrstuvwxyz .,\n"))
STOI = {c: i for i, c in enumerate(VOCAB)}
EOS = STOI["\n"]


def encode(s):
    return torch.tensor([STOI[c] for c in s], dtype=torch.long)


def decode(ids):
    return "".join(VOCAB[i] for i in ids)


class CharGRU(nn.Module):
    def __init__(self, vocab=len(VOCAB), emb=16, hidden=48, layers=1):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.rnn = nn.GRU(emb, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, ids, h=None):
        out, h = self.rnn(self.emb(ids), h)
        return self.head(out), h
