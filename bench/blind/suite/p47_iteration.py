"""Iteration patterns over tensors and Python containers: iter/next, zip, cycles, counters, heaps, groupby."""
import collections
import heapq
import itertools

import torch


def first_two_rows(x):
    it = iter(x)
    a = next(it)
    b = next(it)
    return a + b


def weighted_layers(feats, weights):
    out = torch.zeros_like(feats[0])
    for i, (f, w) in enumerate(zip(feats, weights)):
        out = out + (i + 1) * w * f
    return out


def round_robin(xs, scales):
    acc = 0
    for x, s in zip(xs, itertools.cycle(scales)):
        acc = acc + x * s
    return acc


def class_balanced_weights(labels, logits):
    counts = collections.Counter(labels.tolist())
    w = torch.tensor([1.0 / counts.get(c, 1) for c in range(logits.shape[-1])])
    return torch.nn.functional.cross_entropy(logits, labels, weight=w)


def k_best(candidates, k):
    heap = []
    for i, c in enumerate(candidates):
        heapq.heappush(heap, (c.sum(), i))
    return [i for _, i in heapq.nsmallest(k, heap)]


def run_lengths(tokens, x):
    runs = [len(list(g)) for _, g in itertools.groupby(tokens.tolist())]
    return x * len(runs)


class Cursor:
    def __init__(self, data):
        self.data = data
        self.pos = 0

    def __next__(self):
        row = self.data[self.pos]
        self.pos += 1
        return row


def consume(cursor, x):
    return x + next(cursor)


def main():
    torch.manual_seed(0)
    f = torch.compile(first_two_rows, backend="eager")
    f(torch.randn(3, 2))
    f(torch.randn(5, 2))

    w = torch.compile(weighted_layers, backend="eager")
    w([torch.randn(4) for _ in range(3)], torch.tensor([0.2, 0.3, 0.5]))
    w([torch.randn(4) for _ in range(3)], torch.tensor([0.1, 0.1, 0.8]))

    rr = torch.compile(round_robin, backend="eager")
    rr([torch.randn(2) for _ in range(3)], [1.0, 0.5])
    rr([torch.randn(2) for _ in range(3)], [1.0, 0.5])

    cb = torch.compile(class_balanced_weights, backend="eager")
    cb(torch.tensor([0, 1, 1, 2]), torch.randn(4, 3))
    cb(torch.tensor([0, 0, 0, 2]), torch.randn(4, 3))

    kb = torch.compile(k_best, backend="eager")
    kb([torch.randn(2) for _ in range(4)], 2)
    kb([torch.randn(2) for _ in range(4)], 2)

    rl = torch.compile(run_lengths, backend="eager")
    rl(torch.tensor([1, 1, 2, 3, 3]), torch.randn(2))
    rl(torch.tensor([4, 4, 4, 4, 1]), torch.randn(2))

    cur = Cursor(torch.randn(5, 2))
    cs = torch.compile(consume, backend="eager")
    cs(cur, torch.randn(2))
    cs(cur, torch.randn(2))
