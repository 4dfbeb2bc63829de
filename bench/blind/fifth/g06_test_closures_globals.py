"""Tests for compiled functions that read closures, globals and config objects."""
import math
from types import SimpleNamespace

import torch

SCALE = 2.0
_config = SimpleNamespace(use_bias=True, eps=1e-5, activation="relu")


def assert_close(a, b, msg=""):
    torch.testing.assert_close(a, b, msg=msg or None)


def test_closure_captures_tensor():
    offset = torch.ones(3)

    def fn(x):
        return x * 2 + offset

    opt_fn = torch.compile(fn)
    x = torch.randn(3)
    assert_close(opt_fn(x), fn(x))
    offset = torch.full((3,), 5.0)  # rebinding the cell
    assert_close(opt_fn(x), x * 2 + 5.0)


def test_closure_captures_python_number():
    def make_scaler(factor):
        @torch.compile
        def scale(x):
            return x * factor + math.sqrt(factor)

        return scale

    x = torch.randn(4)
    for factor in (1.0, 4.0, 9.0):
        assert_close(make_scaler(factor)(x), x * factor + math.sqrt(factor))


def test_global_scale_changes():
    global SCALE

    @torch.compile
    def fn(x):
        return x.sin() * SCALE

    x = torch.randn(5)
    assert_close(fn(x), x.sin() * 2.0)
    SCALE = 3.0
    assert_close(fn(x), x.sin() * 3.0)
    SCALE = 2.0


def test_config_object_flags():
    def fn(x, w, b):
        y = x @ w
        if _config.use_bias:
            y = y + b
        if _config.activation == "relu":
            y = torch.relu(y)
        else:
            y = torch.nn.functional.gelu(y)
        return y / (y.norm() + _config.eps)

    opt_fn = torch.compile(fn)
    x, w, b = torch.randn(2, 4), torch.randn(4, 3), torch.randn(3)
    assert_close(opt_fn(x, w, b), fn(x, w, b))
    _config.use_bias = False
    assert_close(opt_fn(x, w, b), fn(x, w, b))
    _config.activation = "gelu"
    assert_close(opt_fn(x, w, b), fn(x, w, b))
    _config.use_bias, _config.activation = True, "relu"


class Normalizer:
    def __init__(self):
        self.mean = 0.0
        self.std = 1.0

    def set_stats(self, mean, std):
        self.mean = mean
        self.std = std

    def __call__(self, x):
        return (x - self.mean) / self.std


def test_attribute_set_by_setter():
    norm = Normalizer()

    @torch.compile
    def fn(x):
        return norm(x).tanh()

    x = torch.randn(6)
    assert_close(fn(x), x.tanh())
    norm.set_stats(0.5, 2.0)
    assert_close(fn(x), ((x - 0.5) / 2.0).tanh())
    norm.set_stats(torch.tensor(0.1), torch.tensor(3.0))
    assert_close(fn(x), ((x - 0.1) / 3.0).tanh())


def test_nonlocal_counter():
    calls = 0

    def fn(x):
        nonlocal calls
        calls += 1
        return x + calls

    opt_fn = torch.compile(fn)
    x = torch.zeros(2)
    first = opt_fn(x)
    second = opt_fn(x)
    assert calls == 2, calls
    assert_close(second - first, torch.ones(2))


def main():
    tests = [v for k, v in sorted(globals().items()) if k.startswith("test_")]
    for test in tests:
        torch._dynamo.reset()
        test()
        print(f"{test.__name__} ... ok")


if __name__ == "__main__":
    main()
