"""Stochastic-depth ViT blocks whose drop rate ramps with a module-global step counter and token stats dict."""
import torch
import torch.nn as nn
import torch.nn.functional as F

_GLOBAL_STEP = 0
_STATS = {"tokens_seen": 0}
DROP_PATH_WARMUP = 4


def drop_path(x, drop_prob: float = 0.0, training: bool = False):
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
    return x * random_tensor / keep_prob


class Block(nn.Module):
    def __init__(self, dim, heads, max_drop):
        super().__init__()
        self.max_drop = max_drop
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.heads = heads
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def attention(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        x = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
        return self.proj(x.transpose(1, 2).reshape(B, N, C))

    def forward(self, x):
        ramp = min(1.0, _GLOBAL_STEP / DROP_PATH_WARMUP)
        p = self.max_drop * ramp
        x = x + drop_path(self.attention(self.norm1(x)), p, self.training)
        return x + drop_path(self.mlp(self.norm2(x)), p, self.training)


class TinyViT(nn.Module):
    def __init__(self, img=16, patch=4, dim=32, depth=3, heads=4, drop_path_rate=0.2, n_classes=10):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, patch, patch)
        self.pos = nn.Parameter(torch.zeros(1, (img // patch) ** 2, dim))
        dpr = [drop_path_rate * i / (depth - 1) for i in range(depth)]
        self.blocks = nn.ModuleList([Block(dim, heads, d) for d in dpr])
        self.head = nn.Linear(dim, n_classes)

    def forward(self, images):
        global _GLOBAL_STEP
        x = self.patch_embed(images).flatten(2).transpose(1, 2) + self.pos
        if self.training:
            _GLOBAL_STEP += 1
            _STATS["tokens_seen"] += x.shape[0] * x.shape[1]
        for blk in self.blocks:
            x = blk(x)
        return self.head(x.mean(1))


def main():
    torch.manual_seed(0)
    model = TinyViT()
    compiled = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for _ in range(5):
        loss = F.cross_entropy(compiled(torch.randn(4, 3, 16, 16)), torch.randint(0, 10, (4,)))
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert _STATS["tokens_seen"] == 5 * 4 * 16


if __name__ == "__main__":
    main()
