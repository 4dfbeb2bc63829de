"""ConvNeXt-ish stage built from functools.partial factories and lru_cache'd shape helpers (kept compile-clean)."""
from functools import lru_cache, partial

import torch
import torch.nn as nn
import torch.nn.functional as F


@lru_cache(maxsize=None)
def make_divisible(v, divisor=8, min_value=None):
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


@lru_cache(maxsize=16)
def same_padding(kernel_size, stride=1, dilation=1):
    return ((stride - 1) + dilation * (kernel_size - 1)) // 2


class LayerNorm2d(nn.LayerNorm):
    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim, kernel_size=7, mlp_ratio=4.0, norm_layer=None, act_layer=None, ls_init=1e-6):
        super().__init__()
        norm_layer = norm_layer or partial(LayerNorm2d, eps=1e-6)
        act_layer = act_layer or nn.GELU
        hidden = make_divisible(dim * mlp_ratio)
        self.conv_dw = nn.Conv2d(dim, dim, kernel_size, padding=same_padding(kernel_size), groups=dim)
        self.norm = norm_layer(dim)
        self.pw1 = nn.Conv2d(dim, hidden, 1)
        self.act = act_layer()
        self.pw2 = nn.Conv2d(hidden, dim, 1)
        self.gamma = nn.Parameter(ls_init * torch.ones(dim))

    def forward(self, x):
        shortcut = x
        x = self.pw2(self.act(self.pw1(self.norm(self.conv_dw(x)))))
        return shortcut + x * self.gamma.reshape(1, -1, 1, 1)


class ConvNeXtStage(nn.Module):
    def __init__(self, in_chs, out_chs, depth=2, stride=2, **block_kwargs):
        super().__init__()
        self.downsample = nn.Sequential(
            LayerNorm2d(in_chs, eps=1e-6),
            nn.Conv2d(in_chs, out_chs, kernel_size=stride, stride=stride),
        ) if in_chs != out_chs or stride > 1 else nn.Identity()
        self.blocks = nn.Sequential(*[ConvNeXtBlock(out_chs, **block_kwargs) for _ in range(depth)])

    def forward(self, x):
        return self.blocks(self.downsample(x))


def build_model(widths=(16, 32), act="gelu"):
    act_layer = {"gelu": nn.GELU, "silu": nn.SiLU, "relu": partial(nn.ReLU, inplace=False)}[act]
    stem = nn.Sequential(nn.Conv2d(3, widths[0], 4, stride=4), LayerNorm2d(widths[0]))
    stages = [ConvNeXtStage(widths[0], widths[0], stride=1, act_layer=act_layer)]
    stages += [ConvNeXtStage(a, b, act_layer=act_layer) for a, b in zip(widths[:-1], widths[1:])]
    head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(widths[-1], 10))
    return nn.Sequential(stem, *stages, head)


def main():
    torch.manual_seed(0)
    model = build_model(act="silu")
    compiled = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for _ in range(3):
        images, labels = torch.randn(4, 3, 32, 32), torch.randint(0, 10, (4,))
        loss = F.cross_entropy(compiled(images), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
