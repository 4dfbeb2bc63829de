from functools import partial
from typing import Callable, Optional, Tuple, Union

import torch
import torch.nn as nn
import torch.nn.functional as F


def drop_path(x, drop_prob: float = 0.0, training: bool = False, scale_by_keep: bool = True):
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
    if keep_prob > 0.0 and scale_by_keep:
        random_tensor.div_(keep_prob)
    return x * random_tensor


class DropPath(nn.Module):
    def __init__(self, drop_prob: float = 0.0):
        super().__init__()
        self.drop_prob = drop_prob

    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training)


class LayerNorm2d(nn.LayerNorm):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class GlobalResponseNorm(nn.Module):
    def __init__(self, dim, eps=1e-6, channels_last=True):
        super().__init__()
        self.eps = eps
        if channels_last:
            self.spatial_dim = (1, 2)
            self.channel_dim = -1
            self.wb_shape = (1, 1, 1, -1)
        else:
            self.spatial_dim = (2, 3)
            self.channel_dim = 1
            self.wb_shape = (1, -1, 1, 1)
        self.weight = nn.Parameter(torch.zeros(dim))
        self.bias = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        x_g = x.norm(p=2, dim=self.spatial_dim, keepdim=True)
        x_n = x_g / (x_g.mean(dim=self.channel_dim, keepdim=True) + self.eps)
        return x + torch.addcmul(self.bias.view(self.wb_shape), self.weight.view(self.wb_shape), x * x_n)


class Mlp(nn.Module):
    def __init__(self, in_features, hidden_features, act_layer=nn.GELU, use_grn=False):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = act_layer()
        self.norm = GlobalResponseNorm(hidden_features) if use_grn else nn.Identity()
        self.fc2 = nn.Linear(hidden_features, in_features)

    def forward(self, x):
        return self.fc2(self.norm(self.act(self.fc1(x))))


class ConvNeXtBlock(nn.Module):
    def __init__(self, in_chs: int, out_chs: Optional[int] = None, kernel_size: int = 7, stride: int = 1,
                 mlp_ratio: float = 4, conv_mlp: bool = False, ls_init_value: Optional[float] = 1e-6,
                 act_layer: Union[str, Callable] = nn.GELU, norm_layer: Optional[Callable] = None,
                 drop_path: float = 0.0, use_grn: bool = False):
        super().__init__()
        out_chs = out_chs or in_chs
        self.use_conv_mlp = conv_mlp
        norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-6)
        self.conv_dw = nn.Conv2d(in_chs, out_chs, kernel_size, stride=stride, padding=kernel_size // 2, groups=in_chs)
        self.norm = norm_layer(out_chs)
        self.mlp = Mlp(out_chs, int(mlp_ratio * out_chs), act_layer=act_layer, use_grn=use_grn)
        self.gamma = nn.Parameter(ls_init_value * torch.ones(out_chs)) if ls_init_value is not None else None
        if in_chs != out_chs or stride != 1:
            self.shortcut = nn.Conv2d(in_chs, out_chs, 1, stride=stride)
        else:
            self.shortcut = nn.Identity()
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()

    def forward(self, x):
        shortcut = x
        x = self.conv_dw(x)
        if self.use_conv_mlp:
            x = self.norm(x)
            x = self.mlp(x)
        else:
            x = x.permute(0, 2, 3, 1)
            x = self.norm(x)
            x = self.mlp(x)
            x = x.permute(0, 3, 1, 2)
        if self.gamma is not None:
            x = x.mul(self.gamma.reshape(1, -1, 1, 1))
        return self.drop_path(x) + self.shortcut(shortcut)


class ConvNeXtStage(nn.Module):
    def __init__(self, in_chs, out_chs, stride=2, depth=2, drop_path_rates=None, use_grn=False):
        super().__init__()
        self.grad_checkpointing = False
        if in_chs != out_chs or stride > 1:
            self.downsample = nn.Sequential(LayerNorm2d(in_chs), nn.Conv2d(in_chs, out_chs, kernel_size=stride, stride=stride))
            in_chs = out_chs
        else:
            self.downsample = nn.Identity()
        drop_path_rates = drop_path_rates or [0.0] * depth
        self.blocks = nn.Sequential(*[
            ConvNeXtBlock(in_chs, out_chs, drop_path=drop_path_rates[i], use_grn=use_grn) for i in range(depth)
        ])

    def forward(self, x):
        x = self.downsample(x)
        return self.blocks(x)


class ConvNeXt(nn.Module):
    def __init__(self, in_chans=3, num_classes=10, depths=(1, 1, 2), dims=(16, 32, 48), drop_path_rate=0.1,
                 use_grn=True, output_stride=32):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(in_chans, dims[0], kernel_size=4, stride=4), LayerNorm2d(dims[0]))
        dp_rates = [x.tolist() for x in torch.linspace(0, drop_path_rate, sum(depths)).split(depths)]
        stages = []
        prev = dims[0]
        for i in range(len(depths)):
            stride = 2 if i > 0 else 1
            stages.append(ConvNeXtStage(prev, dims[i], stride=stride, depth=depths[i], drop_path_rates=dp_rates[i], use_grn=use_grn))
            prev = dims[i]
        self.stages = nn.Sequential(*stages)
        self.norm_pre = nn.Identity()
        self.head_norm = nn.LayerNorm(prev)
        self.head = nn.Linear(prev, num_classes)

    def forward_features(self, x):
        x = self.stem(x)
        x = self.stages(x)
        return self.norm_pre(x)

    def forward_head(self, x, pre_logits: bool = False):
        x = x.mean((2, 3))
        x = self.head_norm(x)
        return x if pre_logits else self.head(x)

    def forward(self, x):
        return self.forward_head(self.forward_features(x))


def main():
    torch.manual_seed(0)
    model = ConvNeXt().eval()
    model.compile()
    with torch.no_grad():
        for _ in range(3):
            logits = model(torch.randn(2, 3, 64, 64))
            probs = logits.softmax(-1)
    return probs


if __name__ == "__main__":
    main()
