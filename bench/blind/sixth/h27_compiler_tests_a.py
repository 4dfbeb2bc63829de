"""Regression tests for compiled numerics helpers, written like a compiler's own unit tests."""
import collections
import math

import numpy as np
import torch

SCALE = 2.0
Stats = collections.namedtuple("Stats", ["mean", "std"])


def _same(a, b, tol=1e-5):
    if isinstance(a, (tuple, list)):
        return all(_same(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, torch.Tensor):
        return torch.allclose(a, b, atol=tol, rtol=tol)
    return a == b


def test_shape_arithmetic():
    def fn(x):
        b, c, h, w = x.shape
        return x.reshape(b, c * h * w // 4, 4).sum(-1) / math.sqrt(c)

    opt_fn = torch.compile(fn)
    for b in (2, 2, 3):
        x = torch.randn(b, 4, 2, 2)
        assert _same(opt_fn(x), fn(x))


def test_scalar_kwarg_sweep():
    def fn(x, alpha=1.0):
        return torch.nn.functional.leaky_relu(x, negative_slope=alpha * 0.01)

    opt_fn = torch.compile(fn)
    x = torch.randn(8)
    for alpha in (1.0, 2.0, 5.0):
        assert _same(opt_fn(x, alpha=alpha), fn(x, alpha=alpha))


def test_reduction_mode_string():
    def fn(x, reduction):
        if reduction == "mean":
            return x.mean()
        elif reduction == "sum":
            return x.sum()
        return x

    opt_fn = torch.compile(fn)
    x = torch.randn(5)
    for r in ("mean", "sum", "none"):
        assert _same(opt_fn(x, r), fn(x, r))


def test_item_in_loop():
    def fn(x):
        total = 0.0
        for row in x:
            total += row.max().item()
        return x / total

    opt_fn = torch.compile(fn)
    for _ in range(2):
        x = torch.rand(3, 4) + 0.1
        assert _same(opt_fn(x), fn(x))


def test_namedtuple_output():
    def fn(x):
        return Stats(x.mean(0), x.std(0))

    opt_fn = torch.compile(fn)
    for n in (4, 6):
        x = torch.randn(n, 3)
        assert _same(tuple(opt_fn(x)), tuple(fn(x)))


def test_global_scale_changes():
    global SCALE

    def fn(x):
        return x * SCALE + 1

    opt_fn = torch.compile(fn)
    x = torch.randn(4)
    for s in (2.0, 3.0):
        SCALE = s
        assert _same(opt_fn(x), fn(x))
    SCALE = 2.0


def test_numpy_roundtrip():
    def fn(x):
        arr = x.numpy()
        return torch.from_numpy(np.cumsum(arr, axis=0)) * 2

    opt_fn = torch.compile(fn)
    for n in (3, 5):
        x = torch.arange(n, dtype=torch.float32)
        assert _same(opt_fn(x), fn(x))


def test_dtype_sweep():
    def fn(x):
        return (x * 3).softmax(-1)

    opt_fn = torch.compile(fn)
    for dtype in (torch.float32, torch.float64, torch.bfloat16):
        x = torch.randn(6).to(dtype)
        assert _same(opt_fn(x).float(), fn(x).float(), tol=1e-2)


def test_nonzero_indices():
    def fn(x):
        idx = (x > 0).nonzero()
        return x[idx[:, 0]] * 2

    opt_fn = torch.compile(fn)
    for _ in range(2):
        x = torch.randn(10)
        assert _same(opt_fn(x), fn(x))


def test_closure_counter():
    calls = [0]

    def fn(x):
        calls[0] += 1
        return x + calls[0]

    opt_fn = torch.compile(fn)
    x = torch.zeros(3)
    for _ in range(3):
        opt_fn(x)
    assert calls[0] == 3


def test_optional_bias():
    def fn(x, w, b=None):
        y = x @ w
        if b is not None:
            y = y + b
        return y

    opt_fn = torch.compile(fn)
    x, w, b = torch.randn(2, 3), torch.randn(3, 4), torch.randn(4)
    assert _same(opt_fn(x, w), fn(x, w))
    assert _same(opt_fn(x, w, b), fn(x, w, b))


def test_isinstance_dispatch():
    def fn(x, scale):
        if isinstance(scale, torch.Tensor):
            return x * scale.unsqueeze(-1)
        return x * scale

    opt_fn = torch.compile(fn)
    x = torch.randn(3, 2)
    s = torch.rand(3)
    for _ in range(2):
        assert _same(opt_fn(x, s), fn(x, s))


def test_tolist_python_sum():
    def fn(x):
        vals = x.tolist()
        return torch.tensor(sorted(vals)[: len(vals) // 2]).sum() + x.mean()

    opt_fn = torch.compile(fn)
    for n in (6, 8):
        x = torch.randn(n)
        assert _same(opt_fn(x), fn(x))


def test_requires_grad_toggle():
    def fn(x):
        return (x.sin() ** 2).sum()

    opt_fn = torch.compile(fn)
    x = torch.randn(5)
    opt_fn(x)
    x.requires_grad_(True)
    opt_fn(x).backward()
    assert x.grad is not None


def test_seeded_noise():
    def fn(x, seed):
        torch.manual_seed(seed)
        return x + 0.1 * torch.randn_like(x)

    opt_fn = torch.compile(fn)
    x = torch.zeros(4)
    for seed in (0, 0):
        _same(opt_fn(x, seed), fn(x, seed))


def test_bool_flag_toggle():
    def fn(x, normalize):
        y = x.cumsum(0)
        if normalize:
            y = y / y[-1]
        return y

    opt_fn = torch.compile(fn)
    x = torch.rand(5) + 0.1
    for flag in (False, True, True):
        assert _same(opt_fn(x, flag), fn(x, flag))


def main():
    tests = [v for k, v in sorted(globals().items()) if k.startswith("test_") and callable(v)]
    for t in tests:
        torch._dynamo.reset()
        t()
    return len(tests)
