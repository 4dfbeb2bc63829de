"""Test cases: local classes, exceptions, generators, sorting and named tuples."""
import collections

import torch


class ShapeError(Exception):
    pass


def test_local_class():
    def fn(x):
        class Accum:
            def __init__(self, v):
                self.v = v

            def add(self, o):
                self.v = self.v + o

        a = Accum(x)
        a.add(x * 2)
        return a.v

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(3))
    opt(torch.randn(3))


def test_raise_custom():
    def fn(x):
        if x.dim() != 2:
            raise ShapeError(f"expected 2-D input, got {x.dim()}-D")
        return x.t() @ x

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(3, 2))
    try:
        opt(torch.randn(3))
    except ShapeError:
        pass


def test_try_except_fallback():
    def fn(x):
        try:
            y = x.view(-1, 4)
        except RuntimeError:
            y = x.reshape(-1, 4)
        return y.sum(0)

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(8))
    opt(torch.randn(8))


def test_generator_argument():
    def fn(batches, acc):
        for b in batches:
            acc = acc + b.mean(0)
        return acc

    opt = torch.compile(fn, backend="eager")
    opt((torch.randn(2, 3) for _ in range(3)), torch.zeros(3))
    opt((torch.randn(2, 3) for _ in range(3)), torch.zeros(3))


def test_sorted_by_norm():
    def fn(vecs):
        ranked = sorted(vecs, key=lambda v: v.norm())
        return ranked[-1] - ranked[0]

    opt = torch.compile(fn, backend="eager")
    opt([torch.randn(3) for _ in range(4)])
    opt([torch.randn(3) for _ in range(4)])


def test_max_with_key():
    def fn(candidates):
        best = max(candidates, key=lambda c: c.sum())
        return best.softmax(-1)

    opt = torch.compile(fn, backend="eager")
    opt([torch.randn(3) for _ in range(3)])
    opt([torch.randn(3) for _ in range(3)])


def test_namedtuple_output():
    Pair = collections.namedtuple("Pair", ["mu", "logvar"])

    def fn(h):
        mu, logvar = h.chunk(2, dim=-1)
        p = Pair(mu, logvar)
        return p.mu + torch.exp(0.5 * p.logvar)

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(2, 6))
    opt(torch.randn(2, 6))


def main():
    torch.manual_seed(0)
    test_local_class()
    test_raise_custom()
    test_try_except_fallback()
    test_generator_argument()
    test_sorted_by_norm()
    test_max_with_key()
    test_namedtuple_output()
