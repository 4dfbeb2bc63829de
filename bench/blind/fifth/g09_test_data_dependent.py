"""Tests for data-dependent code, host syncs, printing and numpy inside compiled functions."""
import logging

import numpy as np
import torch

log = logging.getLogger("probe.tests")


def test_explicit_graph_break():
    @torch.compile
    def fn(x):
        y = x.cos()
        torch._dynamo.graph_break()
        return y + x.sin()

    x = torch.randn(4)
    torch.testing.assert_close(fn(x), x.cos() + x.sin())
    fn(torch.randn(4))


def test_branch_on_tensor_value():
    def fn(x):
        if x.sum() > 0:
            return x * 2
        return x - 1

    opt_fn = torch.compile(fn)
    for x in (torch.ones(3), -torch.ones(3), torch.tensor([1.0, -5.0, 1.0])):
        torch.testing.assert_close(opt_fn(x), fn(x))


def test_item_and_tolist():
    @torch.compile
    def topk_report(scores, k):
        values, idx = scores.topk(k)
        best = values[0].item()
        return idx.tolist(), best

    ids, best = topk_report(torch.tensor([0.1, 0.9, 0.5]), 2)
    assert ids == [1, 2] and abs(best - 0.9) < 1e-6
    topk_report(torch.tensor([0.3, 0.2, 0.7, 0.4]), 3)


def test_while_loop_on_norm():
    @torch.compile
    def normalize_iteratively(x, tol):
        steps = 0
        while x.norm() > 1.0 + tol:
            x = x * 0.5
            steps += 1
        return x, steps

    _, steps = normalize_iteratively(torch.full((4,), 3.0), 1e-3)
    assert steps == 3, steps
    normalize_iteratively(torch.full((4,), 0.1), 1e-3)


def test_print_and_logging():
    @torch.compile
    def fn(x):
        y = x.exp()
        print("intermediate", y.shape)
        log.info("mean=%s", y.mean())
        return y.log()

    x = torch.rand(3) + 0.5
    torch.testing.assert_close(fn(x), x)
    fn(torch.rand(5))


def test_numpy_interop():
    @torch.compile
    def fn(x):
        arr = x.numpy()
        arr = np.clip(arr, -1.0, 1.0)
        return torch.from_numpy(arr) * 2

    fn(torch.randn(4))
    fn(torch.randn(6))


def test_numpy_on_python_values():
    @torch.compile
    def fn(x, gamma):
        decay = np.exp(-gamma)
        return x * float(decay)

    fn(torch.ones(2), 0.1)
    fn(torch.ones(2), 0.2)


def test_nonzero_and_boolean_index():
    @torch.compile
    def fn(x):
        idx = torch.nonzero(x > 0).squeeze(-1)
        return x[idx].sum(), idx.numel()

    s, n = fn(torch.tensor([1.0, -1.0, 2.0]))
    assert n == 2
    fn(torch.tensor([-1.0, -1.0, 3.0, 4.0, 5.0]))


def main():
    logging.basicConfig(level=logging.WARNING)
    for name in sorted(globals()):
        if name.startswith("test_"):
            globals()[name]()
    print("data-dependent tests ok")


if __name__ == "__main__":
    main()
