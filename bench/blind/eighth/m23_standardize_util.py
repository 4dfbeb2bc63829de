"""A shared `standardize` helper used by several preprocessing stages of a data pipeline."""
from __future__ import annotations

from typing import Optional, Sequence

import torch


@torch.compile
def standardize(x: torch.Tensor, dims: Sequence[int], eps: float = 1e-5,
                clip: Optional[float] = None) -> torch.Tensor:
    mean = x.mean(dim=tuple(dims), keepdim=True)
    var = x.var(dim=tuple(dims), keepdim=True, unbiased=False)
    z = (x - mean) / torch.sqrt(var + eps)
    if clip is not None:
        z = z.clamp(-clip, clip)
    return z


def preprocess_images(batch: torch.Tensor) -> torch.Tensor:
    """uint8 NCHW -> per-image standardized float."""
    return standardize(batch.float() / 255.0, dims=(1, 2, 3))


def preprocess_series(series: torch.Tensor) -> torch.Tensor:
    """float64 (batch, time, channels) sensor logs, per-channel over time."""
    return standardize(series, dims=(1,), clip=5.0)


def whiten_features(features: torch.Tensor) -> torch.Tensor:
    """Learned features (with grad) standardized per column."""
    return standardize(features, dims=(0,))


def main() -> None:
    torch.manual_seed(0)
    imgs = torch.randint(0, 256, (4, 3, 8, 8), dtype=torch.uint8)
    print("images", preprocess_images(imgs).std().item())
    series = torch.randn(2, 50, 3, dtype=torch.float64).cumsum(1)
    print("series", preprocess_series(series).dtype)
    proj = torch.nn.Linear(6, 4)
    feats = proj(torch.randn(10, 6))
    z = whiten_features(feats)
    z.sum().backward()
    print("features", proj.weight.grad.norm().item())
    imgs2 = torch.randint(0, 256, (4, 3, 8, 8), dtype=torch.uint8)
    print("images again", preprocess_images(imgs2).mean().item())


if __name__ == "__main__":
    main()
