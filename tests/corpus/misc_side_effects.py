"""Assorted calls Dynamo cannot put in a graph, next to similar ones it can."""
import bisect
import contextlib
import inspect
import json
import os
import sys
import threading

import scipy.special
import torch
import torch.nn as nn

CONFIG = {"scale": 2.0, "buckets": [0.25, 0.5, 0.75]}
LOCK = threading.Lock()


@torch.compiler.disable
def report_stats(x):
    return {"mean": float(x.mean()), "max": float(x.max())}


class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.frozen = False

    def forward(self, x):
        y = self.proj(x)
        stats = report_stats(y)  # expect: DYN601
        if os.environ.get("PROBE_DUMP"):  # ok
            y = y + 0
        if os.path.exists("/nonexistent/probe"):  # expect: DYN309
            y = y * 2
        meta = json.dumps({"shape": list(y.shape)})  # expect: DYN310
        return y, stats, meta


class Streams(nn.Module):
    def forward(self, x):
        sys.stdout.write("tick\n")  # expect: DYN311
        with contextlib.nullcontext():  # ok
            y = x * CONFIG["scale"]
        return y


class Freezer(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        self.proj.bias.requires_grad_(False)  # expect: DYN314
        return self.proj(x)


class LazyHead(nn.Module):
    def forward(self, x):
        head = nn.Linear(x.shape[-1], 2)  # expect: DYN316
        act = nn.GELU()  # ok
        return head(act(x))


class Introspective(nn.Module):
    def forward(self, x):
        caller = inspect.currentframe()  # expect: DYN602
        sig = inspect.signature(Buckets.forward)  # ok
        return x * 2, caller is None, len(sig.parameters)


class Buckets(nn.Module):
    def forward(self, x, p: float):
        b = bisect.bisect_right(CONFIG["buckets"], p)  # expect: DYN603
        return x * b


class SpecialFn(nn.Module):
    def forward(self, x):
        erf = torch.as_tensor(scipy.special.erf(x.numpy()))  # expect: DYN604
        return x * erf + torch.special.erf(x)  # ok


class Locked(nn.Module):
    def forward(self, x):
        with LOCK:  # expect: DYN607
            y = x + 1
        return y


class Debugging(nn.Module):
    def forward(self, x):
        y = x.sin()
        torch._dynamo.graph_break()  # expect: DYN608
        return y.cos()


def __dynlint_calls__():
    torch.manual_seed(0)
    x = torch.randn(2, 4)
    torch.compile(Probe())(x)
    torch.compile(Streams())(x)
    torch.compile(Freezer())(x)
    torch.compile(LazyHead())(x)
    torch.compile(Introspective())(x)
    torch.compile(Buckets())(x, 0.6)
    torch.compile(SpecialFn())(x)
    torch.compile(Locked())(x)
    torch.compile(Debugging())(x)
