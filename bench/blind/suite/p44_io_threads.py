"""Serving-style code: shared caches behind locks, activation dumps to disk, work queues, pickled state."""
import os
import pickle
import queue
import tempfile
import threading

import torch
import torch.nn as nn

DUMP_DIR = tempfile.mkdtemp(prefix="suite_p44_")


class CachedEncoder(nn.Module):
    def __init__(self, d=6):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.lock = threading.Lock()
        self.cache_hits = torch.zeros(())

    def forward(self, x):
        y = self.lin(x).tanh()
        with self.lock:
            self.cache_hits += 1
        return y


class DumpingLayer(nn.Module):
    def __init__(self, d=6, path=os.path.join(DUMP_DIR, "acts.txt")):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.path = path

    def forward(self, x):
        y = self.lin(x)
        with open(self.path, "a") as fh:
            fh.write(f"{tuple(y.shape)}\n")
        return y.relu()


class AsyncLogger:
    def __init__(self):
        self.q = queue.Queue()

    def push(self, t):
        self.q.put(t.detach())


def step_with_queue(model, x, log):
    y = model(x)
    log.push(y.mean())
    return y


def checkpoint_blob(model, x):
    out = model(x)
    blob = pickle.dumps({k: v.shape for k, v in model.state_dict().items()})
    return out, len(blob)


def worker_tag(x):
    name = threading.current_thread().name
    if os.path.isdir(DUMP_DIR):
        x = x + 1
    return x * (len(name) % 3)


def main():
    torch.manual_seed(0)
    enc = CachedEncoder()
    enc.compile(backend="eager")
    enc(torch.randn(2, 6))
    enc(torch.randn(3, 6))

    dl = DumpingLayer()
    dl.compile(backend="eager")
    dl(torch.randn(2, 6))
    dl(torch.randn(2, 6))

    log = AsyncLogger()
    sq = torch.compile(step_with_queue, backend="eager")
    lin = nn.Linear(6, 6)
    sq(lin, torch.randn(2, 6), log)
    sq(lin, torch.randn(2, 6), log)

    cb = torch.compile(checkpoint_blob, backend="eager")
    cb(lin, torch.randn(2, 6))
    cb(lin, torch.randn(2, 6))

    wt = torch.compile(worker_tag, backend="eager")
    wt(torch.randn(3))
    wt(torch.randn(3))
