import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class PatchEmbed(nn.Module):
    def __init__(self, patch=8, in_ch=3, dim=32):
        super().__init__()
        self.patch = patch
        self.proj = nn.Conv2d(in_ch, dim, patch, patch)

    def forward(self, x):
        B, C, H, W = x.shape
        assert H % self.patch == 0 and W % self.patch == 0, f"image size {H}x{W} not divisible by patch"
        x = self.proj(x)
        return x.flatten(2).transpose(1, 2), (H // self.patch, W // self.patch)


class DropPath(nn.Module):
    def __init__(self, p=0.0):
        super().__init__()
        self.p = p

    def forward(self, x):
        if self.p == 0.0 or not self.training:
            return x
        keep = 1 - self.p
        mask = x.new_empty(x.shape[0], *([1] * (x.dim() - 1))).bernoulli_(keep)
        return x * mask / keep


class Block(nn.Module):
    def __init__(self, dim, heads, drop_path):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, dropout=0.1, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * 2), nn.GELU(), nn.Dropout(0.1), nn.Linear(dim * 2, dim))
        self.drop_path = DropPath(drop_path)

    def forward(self, x, need_weights=False):
        h = self.norm1(x)
        a, w = self.attn(h, h, h, need_weights=need_weights)
        x = x + self.drop_path(a)
        x = x + self.drop_path(self.mlp(self.norm2(x)))
        return x, w


class ViT(nn.Module):
    def __init__(self, img_size=32, patch=8, dim=32, depth=2, heads=2, n_classes=10, drop_path=0.1):
        super().__init__()
        self.patch_embed = PatchEmbed(patch, 3, dim)
        n = (img_size // patch) ** 2
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.randn(1, n + 1, dim) * 0.02)
        rates = [drop_path * i / max(depth - 1, 1) for i in range(depth)]
        self.blocks = nn.ModuleList(Block(dim, heads, r) for r in rates)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, n_classes)

    def set_drop_path(self, max_rate):
        depth = len(self.blocks)
        for i, blk in enumerate(self.blocks):
            blk.drop_path.p = max_rate * i / max(depth - 1, 1)

    def interpolate_pos_encoding(self, grid):
        n_old = self.pos_embed.shape[1] - 1
        gh, gw = grid
        if n_old == gh * gw:
            return self.pos_embed
        side = int(math.sqrt(n_old))
        cls_pos, patch_pos = self.pos_embed[:, :1], self.pos_embed[:, 1:]
        patch_pos = patch_pos.reshape(1, side, side, -1).permute(0, 3, 1, 2)
        patch_pos = F.interpolate(patch_pos, size=(gh, gw), mode="bicubic", align_corners=False)
        patch_pos = patch_pos.permute(0, 2, 3, 1).reshape(1, gh * gw, -1)
        return torch.cat([cls_pos, patch_pos], dim=1)

    def forward(self, x, return_attention=False):
        x, grid = self.patch_embed(x)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat([cls, x], dim=1) + self.interpolate_pos_encoding(grid)
        attns = []
        for blk in self.blocks:
            x, w = blk(x, need_weights=return_attention)
            attns.append(w)
        logits = self.head(self.norm(x[:, 0]))
        if return_attention:
            return logits, attns
        return logits
