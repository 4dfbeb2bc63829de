import time
from collections import defaultdict
from functools import partial, wraps
from typing import Callable, Dict, List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_divisible(v, divisor=8, min_value=None, round_limit=0.9):
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < round_limit * v:
        new_v += divisor
    return new_v


_ACT_LAYER_DEFAULT = dict(silu=nn.SiLU, swish=nn.SiLU, relu=nn.ReLU, relu6=nn.ReLU6, gelu=nn.GELU, sigmoid=nn.Sigmoid)


def get_act_layer(name):
    if not isinstance(name, str):
        return name
    return _ACT_LAYER_DEFAULT[name]


def timed(fn):
    @wraps(fn)
    def wrapper(self, *args, **kwargs):
        start = time.perf_counter()
        out = fn(self, *args, **kwargs)
        self.last_forward_ms = (time.perf_counter() - start) * 1000.0
        return out

    return wrapper


class SqueezeExcite(nn.Module):
    def __init__(self, in_chs, rd_ratio=0.25, rd_channels=None, act_layer=nn.ReLU, gate_layer=nn.Sigmoid):
        super().__init__()
        if rd_channels is None:
            rd_channels = make_divisible(in_chs * rd_ratio, 4)
        self.conv_reduce = nn.Conv2d(in_chs, rd_channels, 1, bias=True)
        self.act1 = act_layer(inplace=True)
        self.conv_expand = nn.Conv2d(rd_channels, in_chs, 1, bias=True)
        self.gate = gate_layer()

    def forward(self, x):
        x_se = x.mean((2, 3), keepdim=True)
        x_se = self.conv_reduce(x_se)
        x_se = self.act1(x_se)
        x_se = self.conv_expand(x_se)
        return x * self.gate(x_se)


class InvertedResidual(nn.Module):
    def __init__(self, in_chs, out_chs, dw_kernel_size=3, stride=1, exp_ratio=4.0, act_layer=nn.SiLU,
                 se_layer: Optional[Callable] = None, drop_path_rate=0.0):
        super().__init__()
        mid_chs = make_divisible(in_chs * exp_ratio)
        self.has_skip = in_chs == out_chs and stride == 1
        self.conv_pw = nn.Conv2d(in_chs, mid_chs, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(mid_chs)
        self.act1 = act_layer(inplace=True)
        self.conv_dw = nn.Conv2d(mid_chs, mid_chs, dw_kernel_size, stride, dw_kernel_size // 2, groups=mid_chs, bias=False)
        self.bn2 = nn.BatchNorm2d(mid_chs)
        self.act2 = act_layer(inplace=True)
        self.se = se_layer(mid_chs, act_layer=act_layer) if se_layer else nn.Identity()
        self.conv_pwl = nn.Conv2d(mid_chs, out_chs, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out_chs)
        self.drop_path_rate = drop_path_rate

    def forward(self, x):
        shortcut = x
        x = self.act1(self.bn1(self.conv_pw(x)))
        x = self.act2(self.bn2(self.conv_dw(x)))
        x = self.se(x)
        x = self.bn3(self.conv_pwl(x))
        if self.has_skip:
            x = x + shortcut
        return x


class EfficientNet(nn.Module):
    def __init__(self, num_classes=10, stem_size=16, act_layer="swish", widths=(16, 24, 32), strides=(1, 2, 2)):
        super().__init__()
        act_layer = get_act_layer(act_layer)
        se_layer = partial(SqueezeExcite, rd_ratio=0.25)
        self.conv_stem = nn.Conv2d(3, stem_size, 3, 2, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(stem_size)
        self.act1 = act_layer(inplace=True)
        blocks = []
        prev = stem_size
        for w, s in zip(widths, strides):
            blocks.append(InvertedResidual(prev, w, stride=s, act_layer=act_layer, se_layer=se_layer))
            blocks.append(InvertedResidual(w, w, act_layer=act_layer, se_layer=se_layer))
            prev = w
        self.blocks = nn.Sequential(*blocks)
        self.conv_head = nn.Conv2d(prev, 64, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(64)
        self.act2 = act_layer(inplace=True)
        self.classifier = nn.Linear(64, num_classes)
        self.last_forward_ms = 0.0

    @timed
    def forward(self, x):
        x = self.act1(self.bn1(self.conv_stem(x)))
        x = self.blocks(x)
        x = self.act2(self.bn2(self.conv_head(x)))
        return self.classifier(x.mean((2, 3)))


def avg_sq_ch_mean(model, input, output):
    return torch.mean(output.mean(axis=[0, 2, 3]) ** 2).item()


def avg_ch_var(model, input, output):
    return torch.mean(output.var(axis=[0, 2, 3])).item()


class ActivationStatsHook:
    def __init__(self, model: nn.Module, hook_fn_locs: List[str], hook_fns: List[Callable]):
        self.model = model
        self.hook_fn_locs = hook_fn_locs
        self.hook_fns = hook_fns
        if len(hook_fn_locs) != len(hook_fns):
            raise ValueError("Please provide `hook_fns` for each `hook_fn_locs`")
        self.stats = dict((hook_fn.__name__, []) for hook_fn in hook_fns)
        for hook_fn_loc, hook_fn in zip(hook_fn_locs, hook_fns):
            self.register_hook(hook_fn_loc, hook_fn)

    def _create_hook(self, hook_fn):
        def append_activation_stats(module, input, output):
            out = hook_fn(module, input, output)
            self.stats[hook_fn.__name__].append(out)

        return append_activation_stats

    def register_hook(self, hook_fn_loc, hook_fn):
        for name, module in self.model.named_modules():
            if not name.endswith(hook_fn_loc):
                continue
            module.register_forward_hook(self._create_hook(hook_fn))


def main():
    torch.manual_seed(0)
    model = EfficientNet()
    stats = ActivationStatsHook(model, hook_fn_locs=["blocks.1", "blocks.3"], hook_fns=[avg_sq_ch_mean, avg_ch_var])
    compiled = torch.compile(model.eval())
    with torch.no_grad():
        for _ in range(3):
            compiled(torch.randn(4, 3, 32, 32))
    return stats.stats


if __name__ == "__main__":
    main()
