"""Test cases: standard-library calls made from numeric helpers."""
import json
import os
import random
import sys
import time
import warnings

import torch


def test_print_progress():
    def fn(x, step):
        y = torch.tanh(x) * 2
        print("step", step, "shape", tuple(y.shape))
        return y + 1

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(3), 0)
    opt(torch.randn(3), 1)


def test_warn_on_shape():
    def fn(x):
        if x.dim() > 2:
            warnings.warn("input has extra dims; flattening")
            x = x.flatten(1)
        return x.relu()

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(2, 3, 4))
    opt(torch.randn(2, 3, 4))


def test_perf_counter():
    def fn(x, w):
        start = time.perf_counter()
        y = x @ w
        elapsed = time.perf_counter() - start
        return y, elapsed

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(2, 3), torch.randn(3, 3))
    opt(torch.randn(2, 3), torch.randn(3, 3))


def test_pid_seed():
    def fn(x):
        worker = os.getpid() % 4
        return x + worker

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(2))
    opt(torch.randn(2))


def test_random_dropout_rate():
    def fn(x):
        p = 0.1 + 0.2 * random.random()
        return torch.nn.functional.dropout(x, p=p)

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(5))
    opt(torch.randn(5))


def test_manual_seed_in_fn():
    def fn(x):
        torch.manual_seed(1234)
        noise = torch.randn_like(x)
        return x + 0.1 * noise

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(4))
    opt(torch.randn(4))


def test_json_record():
    def fn(x):
        rec = json.dumps({"rows": x.shape[0], "cols": x.shape[1]})
        return x.sum(1), rec

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(2, 3))
    opt(torch.randn(2, 3))


def test_stdout_flush():
    def fn(x):
        y = x.cumsum(0)
        sys.stdout.flush()
        return y

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(4))
    opt(torch.randn(4))


def test_env_flag_read():
    def fn(x):
        if os.environ.get("SUITE_DEBUG_SCALE") == "1":
            return x * 0.0
        return x * 2.0

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(3))
    opt(torch.randn(3))


def main():
    torch.manual_seed(0)
    random.seed(0)
    test_print_progress()
    test_warn_on_shape()
    test_perf_counter()
    test_pid_seed()
    test_random_dropout_rate()
    test_manual_seed_in_fn()
    test_json_record()
    test_stdout_flush()
    test_env_flag_read()
