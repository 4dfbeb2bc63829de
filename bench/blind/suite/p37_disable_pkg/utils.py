import functools

import numpy as np
import torch


@torch.compiler.disable
def histogram_summary(t, bins=10):
    counts, edges = np.histogram(t.detach().cpu().numpy(), bins=bins)
    return counts.tolist()


@torch._dynamo.disable
def sanity_check(t):
    if not torch.isfinite(t).all():
        raise FloatingPointError("non-finite activations")


def sync_point():
    torch._dynamo.graph_break()


@functools.lru_cache(maxsize=None)
def sinusoid_table(n, d):
    pos = torch.arange(n).float()[:, None]
    i = torch.arange(d // 2).float()[None]
    ang = pos / (10000 ** (2 * i / d))
    return torch.cat([ang.sin(), ang.cos()], dim=-1)


def gated(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        out = fn(*args, **kwargs)
        return out * torch.sigmoid(out)

    return wrapper
