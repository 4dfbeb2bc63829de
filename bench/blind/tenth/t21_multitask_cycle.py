"""Multi-task trainer: itertools.cycle over task names, per-task heads chosen by a string key."""
import itertools
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

TASKS = OrderedDict(sentiment=3, topic=7, toxicity=2, language=5)


class SharedEncoder(nn.Module):
    def __init__(self, vocab=300, dim=32):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.ff = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))

    def forward(self, tokens, offsets):
        return self.ff(self.emb(tokens, offsets))


class MultiTaskModel(nn.Module):
    def __init__(self, tasks):
        super().__init__()
        self.encoder = SharedEncoder()
        self.heads = nn.ModuleDict({name: nn.Linear(32, n) for name, n in tasks.items()})
        self.loss_weights = {name: 1.0 for name in tasks}

    def forward(self, task, tokens, offsets, labels):
        h = self.encoder(tokens, offsets)
        logits = self.heads[task](h)
        loss = F.cross_entropy(logits, labels) * self.loss_weights[task]
        return loss, logits


def collate(lengths, vocab=300):
    offsets = torch.tensor([0] + list(itertools.accumulate(lengths))[:-1])
    tokens = torch.randint(0, vocab, (sum(lengths),))
    return tokens, offsets


def main():
    torch.manual_seed(0)
    model = MultiTaskModel(TASKS)
    step = torch.compile(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    schedule = itertools.islice(itertools.cycle(TASKS.items()), 6)
    for task, n_classes in schedule:
        lengths = [5, 3, 7, 4]
        tokens, offsets = collate(lengths)
        labels = torch.randint(0, n_classes, (len(lengths),))
        loss, _ = step(task, tokens, offsets, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.loss_weights["topic"] = 0.5
    tokens, offsets = collate([5, 3, 7, 4])
    step("topic", tokens, offsets, torch.randint(0, 7, (4,)))


if __name__ == "__main__":
    main()
