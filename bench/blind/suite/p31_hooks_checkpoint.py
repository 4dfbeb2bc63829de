"""Activation checkpointing and hooks: hooks registered at construction vs. inside forward, gradient hooks."""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ff = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d))
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        return x + self.ff(self.norm(x))


class CheckpointedStack(nn.Module):
    def __init__(self, d=8, depth=3, use_ckpt=True):
        super().__init__()
        self.blocks = nn.ModuleList([Block(d) for _ in range(depth)])
        self.use_ckpt = use_ckpt

    def forward(self, x):
        for blk in self.blocks:
            if self.use_ckpt and x.requires_grad:
                x = checkpoint(blk, x, use_reentrant=False)
            else:
                x = blk(x)
        return x


class FeatureTap(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d))
        self.feats = {}

    def forward(self, x):
        handles = []
        for name, mod in self.backbone.named_children():
            handles.append(mod.register_forward_hook(self._save(name)))
        out = self.backbone(x)
        for h in handles:
            h.remove()
        return out

    def _save(self, name):
        def hook(mod, inp, out):
            self.feats[name] = out.detach()
        return hook


class GradClip(nn.Module):
    def __init__(self, d=8, clip=1.0):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.clip = clip

    def forward(self, x):
        y = self.lin(x)
        if y.requires_grad:
            y.register_hook(lambda g: g.clamp(-self.clip, self.clip))
        return y


class Probe(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.stats = []
        self.lin.register_forward_hook(self._record)

    def _record(self, mod, inp, out):
        self.stats.append(out.mean().detach())

    def forward(self, x):
        return self.lin(x).relu()


def main():
    torch.manual_seed(0)
    stack = CheckpointedStack()
    stack.compile(backend="eager")
    stack(torch.randn(2, 8, requires_grad=True)).sum().backward()
    with torch.no_grad():
        stack(torch.randn(2, 8))

    tap = FeatureTap()
    tap.compile(backend="eager")
    tap(torch.randn(2, 8))
    tap(torch.randn(2, 8))

    gc = GradClip()
    gc.compile(backend="eager")
    gc(torch.randn(2, 8)).sum().backward()
    gc(torch.randn(3, 8)).sum().backward()

    pr = Probe()
    pr.compile(backend="eager")
    pr(torch.randn(2, 8))
    pr.stats.clear()
    pr(torch.randn(2, 8))
