"""Logging, warnings and debug output in model code (HF-style helpers included)."""
import functools
import logging
import warnings

import torch
import torch.nn as nn

logger = logging.getLogger("corpus.logging_debug")
logger.setLevel(logging.WARNING)


@functools.lru_cache(None)
def warning_once(self, *args, **kwargs):
    self.warning(*args, **kwargs)


logging.Logger.warning_once = warning_once


class Encoder(nn.Module):
    def __init__(self, dim: int = 8, verbose: bool = False):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.verbose = verbose
        self.gradient_checkpointing = False

    def forward(self, x, output_hidden_states: bool = False):
        if self.gradient_checkpointing and self.training:  # ok
            logger.warning_once("checkpointing is incompatible with caching")  # expect: DYN302
        h = self.proj(x)
        logger.debug("hidden %s", h.shape)  # expect: DYN302
        if self.verbose:  # ok
            print("encoder output", h.shape)  # expect: DYN301
        if not torch.compiler.is_compiling():  # ok
            print("eager-only debug output", h.mean())  # ok
        if output_hidden_states:  # ok
            return h, (x, h)
        return h


class LegacyAPI(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, legacy_scale=None):
        if legacy_scale is not None:  # ok
            warnings.warn("legacy_scale is deprecated", FutureWarning)  # expect: DYN303
            x = x * legacy_scale
        return self.proj(x)


class Describe(nn.Module):
    def forward(self, x):
        y = x.tanh()
        summary = f"mean={y.mean()} shape={tuple(y.shape)}"  # ok
        label = "%s" % y.mean()  # expect: DYN318
        return y, summary, label


def __dynlint_calls__():
    torch.manual_seed(0)
    x = torch.randn(2, 8)
    enc = Encoder(verbose=True)
    enc.gradient_checkpointing = True
    torch.compile(enc.train())(x, output_hidden_states=True)
    torch.compile(LegacyAPI())(x, legacy_scale=torch.tensor(2.0))
    torch.compile(Describe())(x)
