"""Test cases: conditionals, loops and boolean logic in small numeric functions."""
import torch


def test_if_on_reduction():
    def fn(x, y):
        if x.sum() > y.sum():
            return x - y
        return y - x

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(4), torch.randn(4))
    opt(torch.randn(4), torch.randn(4))


def test_while_halving():
    def fn(x):
        steps = 0
        while x.abs().max() > 1.0:
            x = x * 0.5
            steps += 1
        return x, steps

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(8) * 10)
    opt(torch.randn(8) * 100)


def test_conditional_expression():
    def fn(x):
        m = x.mean()
        return (x - m) if m > 0 else (x + m)

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(5))
    opt(torch.randn(5))


def test_short_circuit_and():
    def fn(x, y):
        ok = (x > 0).all() and (y > 0).any()
        return x + y if ok else x

    opt = torch.compile(fn, backend="eager")
    opt(torch.rand(3), torch.rand(3))
    opt(torch.randn(3), torch.randn(3))


def test_any_over_list():
    def fn(xs):
        if any(t.max() > 3 for t in xs):
            return [t.clamp(-3, 3) for t in xs]
        return xs

    opt = torch.compile(fn, backend="eager")
    opt([torch.randn(4), torch.randn(4)])
    opt([torch.randn(4) * 5, torch.randn(4)])


def test_all_of_flags():
    def fn(grads):
        finite = [g.isfinite().all() for g in grads]
        scale = 1.0 if all(finite) else 0.0
        return [g * scale for g in grads]

    opt = torch.compile(fn, backend="eager")
    opt([torch.randn(3), torch.randn(2)])
    opt([torch.randn(3), torch.tensor([1.0, float("inf")])])


def test_not_on_tensor():
    def fn(x, mask):
        if not mask.any():
            return x
        return x.masked_fill(mask, 0.0)

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(4), torch.tensor([False, False, True, False]))
    opt(torch.randn(4), torch.zeros(4, dtype=torch.bool))


def test_shape_branch():
    def fn(x):
        if x.dim() == 3:
            x = x.flatten(0, 1)
        if x.shape[-1] % 2 == 0:
            a, b = x.chunk(2, dim=-1)
            return a * torch.sigmoid(b)
        return x

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(2, 3, 8))
    opt(torch.randn(6, 8))


def test_where_instead_of_if():
    def fn(x, thresh):
        return torch.where(x > thresh, x, torch.zeros_like(x))

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(6), 0.5)
    opt(torch.randn(6), 0.5)


def main():
    torch.manual_seed(0)
    test_if_on_reduction()
    test_while_halving()
    test_conditional_expression()
    test_short_circuit_and()
    test_any_over_list()
    test_all_of_flags()
    test_not_on_tensor()
    test_shape_branch()
    test_where_instead_of_if()
