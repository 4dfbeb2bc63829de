"""Test cases: scalar values read from tensors and used in Python arithmetic."""
import math

import torch


def test_item_as_scale():
    def fn(x):
        peak = x.abs().max().item()
        return x / (peak + 1e-6)

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(5))
    opt(torch.randn(5))


def test_float_and_int_casts():
    def fn(x):
        std = float(x.std())
        top = int(x.argmax())
        return x / std, top

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(6))
    opt(torch.randn(6))


def test_bool_cast_of_flag():
    def fn(x, done):
        if bool(done):
            return torch.zeros_like(x)
        return x * 0.99

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(3), torch.tensor(False))
    opt(torch.randn(3), torch.tensor(True))


def test_tolist_floats():
    def fn(probs):
        ps = probs.softmax(-1).tolist()
        return max(ps)

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(4))
    opt(torch.randn(4))


def test_tolist_split_sizes():
    def fn(x, lengths):
        chunks = torch.split(x, lengths.tolist())
        return torch.stack([c.mean(0) for c in chunks])

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(6, 2), torch.tensor([2, 4]))
    opt(torch.randn(6, 2), torch.tensor([3, 3]))


def test_math_on_tensor():
    def fn(logits, temperature):
        t = math.exp(temperature.log())
        return logits / t

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(3), torch.tensor(2.0))
    opt(torch.randn(3), torch.tensor(0.5))


def test_size_arithmetic():
    def fn(x):
        half = x.shape[0] // 2
        scale = math.sqrt(x.size(-1))
        return x[:half] / scale, x[half:] * scale

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(4, 9))
    opt(torch.randn(4, 16))


def main():
    torch.manual_seed(0)
    test_item_as_scale()
    test_float_and_int_casts()
    test_bool_cast_of_flag()
    test_tolist_floats()
    test_tolist_split_sizes()
    test_math_on_tensor()
    test_size_arithmetic()
