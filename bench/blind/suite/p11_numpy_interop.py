"""Test cases: NumPy used alongside tensors in small preprocessing helpers."""
import numpy as np
import torch


def test_percentile_clip():
    def fn(x):
        arr = x.detach().numpy()
        hi = np.percentile(arr, 95)
        return x.clamp(max=hi.item())

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(20))
    opt(torch.randn(20))


def test_unique_rows():
    def fn(points):
        grid = np.floor(points.numpy() * 4)
        cells = np.unique(grid, axis=0)
        return torch.from_numpy(cells)

    opt = torch.compile(fn, backend="eager")
    opt(torch.rand(16, 2))
    opt(torch.rand(16, 2))


def test_numpy_random_flip():
    def fn(img):
        if np.random.rand() < 0.5:
            img = img.flip(-1)
        return img

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(1, 4, 4))
    opt(torch.randn(1, 4, 4))


def test_array_to_list():
    def fn(x):
        arr = (x * 10).numpy()
        return arr.tolist()

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(3))
    opt(torch.randn(3))


def test_numpy_branch():
    def fn(x):
        a = x.numpy()
        if np.abs(a).mean() > 1.0:
            return x / 2
        return x

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(5))
    opt(torch.randn(5) * 3)


def test_numpy_math_clean():
    def fn(x):
        a = x.numpy()
        b = np.where(a > 0, np.sqrt(np.abs(a)), 0.0)
        return torch.from_numpy(np.exp(-b)).sum()

    opt = torch.compile(fn, backend="eager")
    opt(torch.randn(6))
    opt(torch.randn(6))


def main():
    torch.manual_seed(0)
    np.random.seed(0)
    test_percentile_clip()
    test_unique_rows()
    test_numpy_random_flip()
    test_array_to_list()
    test_numpy_branch()
    test_numpy_math_clean()
