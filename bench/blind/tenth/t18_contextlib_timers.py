"""Encoder blocks instrumented with a user @contextmanager section timer and a global profiling switch."""
import contextlib
import time
from collections import defaultdict

import torch
import torch.nn as nn

PROFILE = {"enabled": False}
_SECTION_TIMES = defaultdict(float)


@contextlib.contextmanager
def timed_section(name):
    if not PROFILE["enabled"]:
        yield
        return
    start = time.perf_counter()
    try:
        yield
    finally:
        _SECTION_TIMES[name] += time.perf_counter() - start


class ConvFFN(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dw = nn.Conv1d(dim, dim, 3, padding=1, groups=dim)
        self.pw = nn.Linear(dim, dim)

    def forward(self, x):
        return self.pw(torch.relu(self.dw(x.transpose(1, 2)).transpose(1, 2)))


class EncoderBlock(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(dim)
        self.ffn = ConvFFN(dim)

    def forward(self, x, key_padding_mask=None):
        with timed_section("attention"):
            h = self.ln1(x)
            x = x + self.attn(h, h, h, key_padding_mask=key_padding_mask, need_weights=False)[0]
        with timed_section("ffn"):
            x = x + self.ffn(self.ln2(x))
        return x


class Encoder(nn.Module):
    def __init__(self, depth=2, dim=32):
        super().__init__()
        self.blocks = nn.ModuleList([EncoderBlock(dim) for _ in range(depth)])
        self.out_norm = nn.LayerNorm(dim)

    def forward(self, x, key_padding_mask=None):
        for blk in self.blocks:
            x = blk(x, key_padding_mask)
        return self.out_norm(x)


def main():
    torch.manual_seed(0)
    enc = Encoder().eval()
    compiled = torch.compile(enc)
    x = torch.randn(2, 9, 32)
    mask = torch.zeros(2, 9, dtype=torch.bool)
    mask[1, 6:] = True
    with torch.no_grad():
        compiled(x, mask)
        compiled(x, mask)
        PROFILE["enabled"] = True
        compiled(x, mask)
        compiled(x, mask)
    report = {k: round(v * 1e3, 3) for k, v in _SECTION_TIMES.items()}
    assert set(report) <= {"attention", "ffn"}


if __name__ == "__main__":
    main()
