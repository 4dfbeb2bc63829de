"""Plugin-style feature extractors registered in module globals; compiled forward with global config."""
import functools

import torch
import torch.nn as nn

_REGISTRY = {}
FEATURE_CACHE = []
CONFIG = {"scale": 1.0, "calls": 0}
EPS = 1e-6


def register(name):
    def deco(fn):
        _REGISTRY[name] = fn
        return fn
    return deco


@register("zscore")
def zscore(x):
    return (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + EPS)


@register("minmax")
def minmax(x):
    lo, hi = x.aminmax(dim=-1, keepdim=True)
    return (x - lo) / (hi - lo + EPS)


class FeatureModel(nn.Module):
    def __init__(self, feats=("zscore", "minmax"), d=8):
        super().__init__()
        self.feats = list(feats)
        self.proj = nn.Linear(d * len(feats), 4)

    def forward(self, x, keep_cache=False):
        CONFIG["calls"] += 1
        parts = [_REGISTRY[name](x) * CONFIG["scale"] for name in self.feats]
        h = torch.cat(parts, -1)
        if keep_cache:
            FEATURE_CACHE.append(h.detach())
        return self.proj(h)


def make_scorer(model):
    calls = 0

    def score(x, bias):
        nonlocal calls
        calls += 1
        return model(x).softmax(-1) + bias

    return torch.compile(functools.partial(score, bias=0.0))


def main():
    torch.manual_seed(0)
    model = FeatureModel()
    fwd = torch.compile(model)
    for i in range(3):
        CONFIG["scale"] = 1.0 + 0.5 * i
        out = fwd(torch.randn(4, 8), keep_cache=True)
    scorer = make_scorer(model)
    for _ in range(2):
        s = scorer(torch.randn(4, 8))
    return out.shape, s.shape, len(FEATURE_CACHE)


if __name__ == "__main__":
    print(main())
