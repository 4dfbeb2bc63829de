"""Regression tests for a small library of tensor utilities, each exercised under torch.compile."""
from __future__ import annotations

import torch
import torch.nn.functional as F


def soft_clip(x: torch.Tensor, lo: float, hi: float, sharpness: float = 10.0) -> torch.Tensor:
    return lo + (hi - lo) * torch.sigmoid(sharpness * ((x - lo) / (hi - lo) - 0.5))


def masked_reduce(x: torch.Tensor, mask: torch.Tensor, how: str) -> torch.Tensor:
    x = x * mask
    if how == "sum":
        return x.sum(-1)
    if how == "mean":
        return x.sum(-1) / mask.sum(-1).clamp(min=1)
    if how == "max":
        return x.masked_fill(mask == 0, float("-inf")).amax(-1)
    raise ValueError(how)


def test_soft_clip_bounds():
    @torch.compile
    def fn(x, lo, hi):
        return soft_clip(x, lo, hi)

    x = torch.linspace(-5, 5, 101)
    for lo, hi in [(-1.0, 1.0), (0.0, 6.0), (-3, 3)]:
        y = fn(x, lo, hi)
        assert y.min() >= lo - 1e-4 and y.max() <= hi + 1e-4


def test_masked_reduce_modes():
    @torch.compile
    def fn(x, mask, how):
        return masked_reduce(x, mask, how)

    x = torch.randn(4, 7)
    mask = (torch.rand(4, 7) > 0.3).float()
    mask[:, 0] = 1
    for how in ("sum", "mean", "max"):
        torch.testing.assert_close(fn(x, mask, how), masked_reduce(x, mask, how))


def test_pad_to_multiple():
    @torch.compile
    def fn(x, multiple):
        pad = (-x.shape[-1]) % multiple
        return F.pad(x, (0, pad))

    for length, multiple in [(10, 8), (13, 8), (13, 4)]:
        out = fn(torch.ones(2, length), multiple)
        assert out.shape[-1] % multiple == 0


def test_one_hot_smoothing():
    @torch.compile
    def fn(labels, num_classes: int, eps: float):
        oh = F.one_hot(labels, num_classes).float()
        return oh * (1 - eps) + eps / num_classes

    for n in (3, 5):
        y = fn(torch.tensor([0, 1, 2]), n, 0.1)
        torch.testing.assert_close(y.sum(-1), torch.ones(3))


def main() -> None:
    tests = [test_soft_clip_bounds, test_masked_reduce_modes, test_pad_to_multiple, test_one_hot_smoothing]
    for t in tests:
        t()
        print("PASS", t.__name__)


if __name__ == "__main__":
    main()
