"""A normalisation block and a gradient-clipping helper with diagnostic logging."""
import logging

import torch
import torch.nn as nn

logger = logging.getLogger("suite.p05")
logger.addHandler(logging.NullHandler())
logger.propagate = False


class NormStats(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.norm(x)
        logger.info("pre-proj activations: %s", tuple(h.shape))
        out = self.proj(h)
        logger.debug("post-proj max %s", out.abs().max())
        return out


def clip_and_report(grads, max_norm):
    total = torch.stack([g.norm() for g in grads]).norm()
    logging.info("global grad norm computed")
    coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
    return [g * coef for g in grads]


def main():
    torch.manual_seed(0)
    model = NormStats(8)
    model.compile(backend="eager")
    model(torch.randn(2, 8))
    model(torch.randn(3, 8))

    clip = torch.compile(clip_and_report, backend="eager")
    clip([torch.randn(4), torch.randn(2, 2)], 1.0)
    clip([torch.randn(4), torch.randn(2, 2)], 0.5)
