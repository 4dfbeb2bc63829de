"""Child-sum Tree-LSTM over parse trees held as Python objects, encoded recursively."""
from typing import List, NamedTuple, Optional

import torch
import torch.nn as nn


class Tree(NamedTuple):
    word_id: Optional[int]
    children: List["Tree"]


def leaf(w):
    return Tree(w, [])


class ChildSumTreeLSTM(nn.Module):
    def __init__(self, vocab_size=50, in_dim=16, mem_dim=24):
        super().__init__()
        self.mem_dim = mem_dim
        self.emb = nn.Embedding(vocab_size, in_dim)
        self.ioux = nn.Linear(in_dim, 3 * mem_dim)
        self.iouh = nn.Linear(mem_dim, 3 * mem_dim)
        self.fx = nn.Linear(in_dim, mem_dim)
        self.fh = nn.Linear(mem_dim, mem_dim)
        self.null_word = nn.Parameter(torch.zeros(in_dim))

    def node_forward(self, inputs, child_c, child_h):
        child_h_sum = child_h.sum(0, keepdim=True)
        iou = self.ioux(inputs) + self.iouh(child_h_sum)
        i, o, u = torch.split(iou, self.mem_dim, dim=1)
        i, o, u = torch.sigmoid(i), torch.sigmoid(o), torch.tanh(u)
        f = torch.sigmoid(self.fh(child_h) + self.fx(inputs).repeat(len(child_h), 1))
        c = i * u + (f * child_c).sum(0, keepdim=True)
        return c, o * torch.tanh(c)

    def encode(self, tree):
        if tree.word_id is None:
            inputs = self.null_word[None]
        else:
            inputs = self.emb.weight[tree.word_id][None]
        if not tree.children:
            zeros = inputs.new_zeros(1, self.mem_dim)
            return self.node_forward(inputs, zeros, zeros)
        states = [self.encode(ch) for ch in tree.children]
        child_c = torch.cat([c for c, _ in states], 0)
        child_h = torch.cat([h for _, h in states], 0)
        return self.node_forward(inputs, child_c, child_h)

    def forward(self, tree):
        return self.encode(tree)[1]


class SentimentHead(nn.Module):
    def __init__(self, encoder, num_classes=5):
        super().__init__()
        self.encoder = encoder
        self.out = nn.Linear(encoder.mem_dim, num_classes)

    def forward(self, tree):
        return self.out(self.encoder(tree)).log_softmax(-1)


def main():
    torch.manual_seed(0)
    model = torch.compile(SentimentHead(ChildSumTreeLSTM()))
    treebank = [
        Tree(None, [leaf(3), Tree(None, [leaf(7), leaf(9)])]),
        Tree(None, [leaf(3), Tree(None, [leaf(7), leaf(9)])]),
        Tree(None, [Tree(None, [leaf(1), leaf(2)]), leaf(4)]),
        Tree(None, [leaf(5), leaf(6), leaf(8)]),
    ]
    labels = torch.tensor([1, 1, 3, 0])
    total = 0.0
    for tree, label in zip(treebank, labels):
        logp = model(tree)
        total = total + nn.functional.nll_loss(logp, label[None])
    total.backward()


if __name__ == "__main__":
    main()
