"""Test cases: functions called with different argument values, dtypes and ranks."""
import torch


def test_int_loop_bound():
    def fn(x, n_iter):
        for _ in range(n_iter):
            x = torch.sin(x) + x
        return x

    opt = torch.compile(fn, backend="eager")
    for n in (2, 3, 4):
        opt(torch.randn(3), n)


def test_string_mode():
    def fn(x, reduction):
        loss = (x - 1.0) ** 2
        if reduction == "mean":
            return loss.mean()
        if reduction == "sum":
            return loss.sum()
        return loss

    opt = torch.compile(fn, backend="eager")
    for red in ("mean", "sum", "none"):
        opt(torch.randn(4), red)


def test_bool_flag():
    def fn(x, normalize):
        if normalize:
            x = x / x.norm(dim=-1, keepdim=True)
        return x @ x.t()

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(3, 4), True)
    opt(torch.randn(3, 4), False)


def test_optional_mask():
    def fn(scores, mask=None):
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        return scores.softmax(-1)

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(2, 5))
    opt(torch.randn(2, 5), torch.rand(2, 5) > 0.3)


def test_float_scale():
    def fn(x, alpha):
        return x * alpha + (1 - alpha) * x.mean()

    opt = torch.compile(fn, backend="eager")
    for a in (0.1, 0.2, 0.3):
        opt(torch.randn(4), a)


def test_dtype_change():
    def fn(x):
        return (x * 2).sum(-1)

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(3, 3))
    opt(torch.randn(3, 3, dtype=torch.float64))
    opt(torch.randn(3, 3).half())


def test_rank_change():
    def fn(x):
        return x.softmax(-1)

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(4))
    opt(torch.randn(2, 4))
    opt(torch.randn(2, 2, 4))


def test_requires_grad_change():
    def fn(x, w):
        return (x @ w).relu()

    opt = torch.compile(fn, backend="eager")
    w = torch.randn(3, 3)
    opt(torch.randn(2, 3), w)
    opt(torch.randn(2, 3), w.clone().requires_grad_())


def test_tuple_of_ints():
    def fn(x, kernel):
        return torch.nn.functional.avg_pool2d(x, kernel)

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(1, 1, 8, 8), (2, 2))
    opt(torch.randn(1, 1, 8, 8), (4, 4))


def test_inplace_on_view():
    def fn(col, delta):
        col.mul_(0.5).add_(delta)
        return col.sum()

    opt = torch.compile(fn, backend="eager")
    table = torch.randn(4, 4)
    opt(table[0], 1.0)
    opt(table[:, 1], 1.0)
    opt(table[2:, 2], 1.0)


def main():
    torch.manual_seed(0)
    test_int_loop_bound()
    test_string_mode()
    test_bool_flag()
    test_optional_mask()
    test_float_scale()
    test_dtype_change()
    test_rank_change()
    test_requires_grad_change()
    test_tuple_of_ints()
    test_inplace_on_view()
