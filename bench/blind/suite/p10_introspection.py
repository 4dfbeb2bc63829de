"""Test cases: frames, tracebacks, object identity, storage sharing, __dict__ and vars()."""
import inspect
import io
import traceback

import torch
import torch.nn as nn


def test_caller_name():
    def fn(x):
        caller = inspect.stack()[1].function
        return x * len(caller)

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(2))
    opt(torch.randn(2))


def test_traceback_capture():
    def fn(x):
        buf = io.StringIO()
        traceback.print_stack(limit=2, file=buf)
        return x + 1

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(2))
    opt(torch.randn(2))


def test_same_object():
    def fn(q, k):
        if id(q) == id(k):
            return q @ q.t()
        return q @ k.t()

    opt = torch.compile(fn, backend="eager")
    a = torch.randn(2, 3)
    opt(a, a)
    opt(a, torch.randn(2, 3))


def test_shared_storage():
    def fn(a, b):
        same = a.data_ptr() == b.data_ptr()
        return a + b if same else a - b

    opt = torch.compile(fn, backend="eager")
    t = torch.randn(4)
    opt(t, t.view(4))
    opt(t, torch.randn(4))


class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.gain = 2.0
        self.bias = 0.5

    def forward(self, x):
        cfg = {k: v for k, v in self.__dict__.items() if isinstance(v, float)}
        return x * cfg["gain"] + cfg["bias"]


class Cfg:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def test_vars_of_config():
    def fn(x, cfg):
        total = 0.0
        for name, val in vars(cfg).items():
            total = total + val
        return x * total

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(2), Cfg(a=1.0, b=2.0))
    opt(torch.randn(2), Cfg(a=1.0, b=2.0, c=0.5))


def main():
    torch.manual_seed(0)
    test_caller_name()
    test_traceback_capture()
    test_same_object()
    test_shared_storage()
    m = Scaler()
    m.compile(backend="eager")
    m(torch.randn(3))
    m.gain = 3.0
    m(torch.randn(3))
    test_vars_of_config()
