"""Test cases: functions and modules that keep counters, histories and settings."""
import torch
import torch.nn as nn

CALLS = 0
HISTORY = []
TEMPERATURE = 1.0
STATS = {}


def count_calls(x):
    global CALLS
    CALLS += 1
    return x * CALLS


def remember(x):
    HISTORY.append(x.detach())
    return x + len(HISTORY)


def tempered(logits):
    return (logits / TEMPERATURE).softmax(-1)


def track(x):
    STATS["seen"] = STATS.get("seen", 0) + 1
    return x * 2


class Smoother(nn.Module):
    def __init__(self):
        super().__init__()
        self.updates = 0
        self.decay = 0.9

    def forward(self, x):
        self.updates += 1
        d = min(self.decay, (1 + self.updates) / (10 + self.updates))
        return x * d


def make_accumulator():
    seen = []

    def acc(x):
        seen.append(x.shape[0])
        return x.sum() / sum(seen)

    return acc


def main():
    torch.manual_seed(0)
    global TEMPERATURE
    f1 = torch.compile(count_calls, backend="eager")
    for _ in range(3):
        f1(torch.randn(2))

    f2 = torch.compile(remember, backend="eager")
    for _ in range(3):
        f2(torch.randn(2))

    f3 = torch.compile(tempered, backend="eager")
    f3(torch.randn(4))
    TEMPERATURE = 0.7
    f3(torch.randn(4))

    f4 = torch.compile(track, backend="eager")
    for _ in range(3):
        f4(torch.randn(2))

    sm = Smoother()
    sm.compile(backend="eager")
    for _ in range(3):
        sm(torch.randn(3))

    f5 = torch.compile(make_accumulator(), backend="eager")
    for n in (2, 3, 4):
        f5(torch.randn(n))
