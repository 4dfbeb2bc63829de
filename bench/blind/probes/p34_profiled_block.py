"""Model code instrumented with a user timing context manager, a lock, and per-call debug files."""
import contextlib
import os
import tempfile
import threading
import time
from collections import defaultdict

import torch
import torch.nn as nn

TIMINGS = defaultdict(float)
_LOCK = threading.Lock()


@contextlib.contextmanager
def timed(section):
    start = time.perf_counter()
    try:
        yield
    finally:
        TIMINGS[section] += time.perf_counter() - start


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d, 2 * d), nn.Linear(2 * d, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        with timed(type(self).__name__):
            return x + self.fc2(torch.relu(self.fc1(self.norm(x))))


class Net(nn.Module):
    def __init__(self, d=16, depth=2, dump_dir=None):
        super().__init__()
        self.blocks = nn.ModuleList([Block(d) for _ in range(depth)])
        self.head = nn.Linear(d, 1)
        self.dump_dir = dump_dir
        self.calls = 0

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        with _LOCK:
            self.calls += 1
        if self.dump_dir is not None:
            with open(os.path.join(self.dump_dir, "acts.txt"), "a") as f:
                f.write(f"{x.shape}\n")
        return self.head(x)


def main():
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as d:
        net = Net(dump_dir=d)
        net.compile()
        for b in (2, 3):
            y = net(torch.randn(b, 16))
    return y.shape, dict(TIMINGS)


if __name__ == "__main__":
    print(main())
