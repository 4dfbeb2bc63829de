"""Tests for lists, generators, user classes and context managers under torch.compile."""
import contextlib
import time

import torch


def check(actual, expected):
    torch.testing.assert_close(actual, expected)


def test_list_that_grows():
    history = []

    @torch.compile
    def smooth(x):
        history.append(x)
        return torch.stack(history[-3:]).mean(0)

    for i in range(4):
        x = torch.full((2,), float(i))
        out = smooth(x)
    check(out, torch.full((2,), 2.0))


def test_list_argument_length_changes():
    def fn(xs):
        total = xs[0]
        for x in xs[1:]:
            total = total + x
        return total

    opt_fn = torch.compile(fn)
    for n in (1, 2, 3, 5):
        xs = [torch.ones(3)] * n
        check(opt_fn(xs), torch.full((3,), float(n)))


def test_generator_expression_and_generator_function():
    def chunks(x, size):
        for start in range(0, x.shape[0], size):
            yield x[start : start + size]

    @torch.compile
    def fn(x):
        return sum(c.sum() for c in chunks(x, 2))

    check(fn(torch.arange(6.0)), torch.tensor(15.0))
    check(fn(torch.arange(9.0)), torch.tensor(36.0))


class RunningStats:
    def __init__(self, momentum=0.1):
        self.momentum = momentum
        self.mean = None
        self.steps = 0

    def update(self, x):
        batch_mean = x.mean(0)
        if self.mean is None:
            self.mean = batch_mean
        else:
            self.mean = (1 - self.momentum) * self.mean + self.momentum * batch_mean
        self.steps += 1
        return self.mean


def test_user_class_state():
    stats = RunningStats()
    update = torch.compile(stats.update)
    for _ in range(3):
        update(torch.randn(4, 2))
    assert stats.steps == 3


class Timer(contextlib.ContextDecorator):
    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.elapsed = time.perf_counter() - self.start
        return False


def test_context_managers():
    timer = Timer()

    @torch.compile
    def fn(x, w):
        with torch.no_grad():
            scale = w.norm()
        with timer:
            y = x @ w
        with torch.autocast("cpu", dtype=torch.bfloat16):
            z = y @ w.T
        return z.float() / scale

    x = torch.randn(2, 3)
    w = torch.randn(3, 3, requires_grad=True)
    fn(x, w)
    fn(x, w.detach())


@contextlib.contextmanager
def scaled_default_dtype(dtype):
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


def test_contextmanager_decorator():
    @torch.compile
    def fn(x):
        with scaled_default_dtype(torch.float64):
            y = torch.ones(2) * x.sum()
        return y

    out = fn(torch.ones(3))
    fn(torch.ones(4))
    assert out.dtype == torch.float64


def test_dataclass_like_namedtuple():
    from collections import namedtuple

    Output = namedtuple("Output", ["logits", "aux"])

    @torch.compile
    def fn(x, with_aux):
        logits = x.relu()
        return Output(logits, logits.mean() if with_aux else None)

    out = fn(torch.randn(3), True)
    assert out.aux is not None
    out = fn(torch.randn(3), False)
    assert out.aux is None


def main():
    test_list_that_grows()
    test_list_argument_length_changes()
    test_generator_expression_and_generator_function()
    test_user_class_state()
    test_context_managers()
    test_contextmanager_decorator()
    test_dataclass_like_namedtuple()
    print("all container/class tests passed")


if __name__ == "__main__":
    main()
