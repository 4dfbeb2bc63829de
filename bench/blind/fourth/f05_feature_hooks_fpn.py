from collections import OrderedDict, defaultdict
from functools import partial
from typing import Dict, List, Optional, Sequence, Tuple, Union

import torch
import torch.nn as nn
import torch.nn.functional as F


class FeatureInfo:
    def __init__(self, feature_info: List[Dict], out_indices: Tuple[int, ...]):
        self.out_indices = out_indices
        self.info = feature_info

    def get(self, key, idx=None):
        if idx is None:
            return [self.info[i][key] for i in self.out_indices]
        return self.info[idx][key]

    def channels(self, idx=None):
        return self.get("num_chs", idx)

    def reduction(self, idx=None):
        return self.get("reduction", idx)

    def module_name(self, idx=None):
        return self.get("module", idx)


class FeatureHooks:
    def __init__(self, hooks: Sequence[Dict], named_modules: dict, out_map: Sequence[Union[int, str]] = None,
                 default_hook_type: str = "forward"):
        self._feature_outputs = defaultdict(OrderedDict)
        modules = {k: v for k, v in named_modules}
        for i, h in enumerate(hooks):
            hook_name = h["module"]
            m = modules[hook_name]
            hook_id = out_map[i] if out_map else hook_name
            hook_fn = partial(self._collect_output_hook, hook_id)
            hook_type = h.get("hook_type", default_hook_type)
            if hook_type == "forward_pre":
                m.register_forward_pre_hook(hook_fn)
            elif hook_type == "forward":
                m.register_forward_hook(hook_fn)
            else:
                assert False, "Unsupported hook type"

    def _collect_output_hook(self, hook_id, *args):
        x = args[-1]
        if isinstance(x, tuple):
            x = x[0]
        self._feature_outputs[x.device][hook_id] = x

    def get_output(self, device) -> Dict[str, torch.Tensor]:
        output = self._feature_outputs[device]
        self._feature_outputs[device] = OrderedDict()
        return output


class ConvBnAct(nn.Module):
    def __init__(self, in_chs, out_chs, stride=1, act_layer=nn.ReLU):
        super().__init__()
        self.conv = nn.Conv2d(in_chs, out_chs, 3, stride=stride, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(out_chs)
        self.act = act_layer(inplace=True)

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class TinyResNet(nn.Module):
    def __init__(self, widths=(8, 16, 32, 64)):
        super().__init__()
        self.stem = ConvBnAct(3, widths[0], stride=2)
        stages = []
        prev = widths[0]
        for i, w in enumerate(widths):
            stages.append(nn.Sequential(ConvBnAct(prev, w, stride=1 if i == 0 else 2), ConvBnAct(w, w)))
            prev = w
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.feature_info = [
            dict(num_chs=widths[0], reduction=2, module="stem"),
            dict(num_chs=widths[0], reduction=2, module="layer1"),
            dict(num_chs=widths[1], reduction=4, module="layer2"),
            dict(num_chs=widths[2], reduction=8, module="layer3"),
            dict(num_chs=widths[3], reduction=16, module="layer4"),
        ]
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(widths[-1], 10)


class FeatureHookNet(nn.ModuleDict):
    def __init__(self, model: nn.Module, out_indices: Tuple[int, ...] = (1, 2, 3, 4), return_dict: bool = False):
        super().__init__()
        self.feature_info = FeatureInfo(model.feature_info, out_indices)
        self.return_dict = return_dict
        hooks = [dict(module=self.feature_info.module_name(i), hook_type="forward") for i in out_indices]
        layers = OrderedDict()
        remaining = set(h["module"] for h in hooks)
        for new_name, old_name, module in ((n, n, m) for n, m in model.named_children()):
            layers[new_name] = module
            remaining.discard(old_name)
            if not remaining:
                break
        self.update(layers)
        self.hooks = FeatureHooks(hooks, model.named_modules())

    def forward(self, x):
        for name, module in self.items():
            x = module(x)
        out = self.hooks.get_output(x.device)
        return out if self.return_dict else list(out.values())


class FPN(nn.Module):
    def __init__(self, in_channels: List[int], out_channels: int = 16):
        super().__init__()
        self.lateral = nn.ModuleList([nn.Conv2d(c, out_channels, 1) for c in in_channels])
        self.output = nn.ModuleList([nn.Conv2d(out_channels, out_channels, 3, padding=1) for _ in in_channels])

    def forward(self, feats: List[torch.Tensor]) -> List[torch.Tensor]:
        laterals = [l(f) for l, f in zip(self.lateral, feats)]
        for i in range(len(laterals) - 1, 0, -1):
            laterals[i - 1] = laterals[i - 1] + F.interpolate(laterals[i], size=laterals[i - 1].shape[-2:], mode="nearest")
        return [conv(l) for conv, l in zip(self.output, laterals)]


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = FeatureHookNet(TinyResNet(), out_indices=(2, 3, 4))
        self.neck = FPN(self.backbone.feature_info.channels())
        self.head = nn.Conv2d(16, 5, 1)

    def forward(self, images):
        feats = self.backbone(images)
        feats = self.neck(feats)
        return [self.head(f).flatten(2) for f in feats]


def main():
    torch.manual_seed(0)
    model = torch.compile(Detector().eval())
    with torch.no_grad():
        for size in (64, 96, 128):
            outs = model(torch.randn(2, 3, size, size))
    return outs


if __name__ == "__main__":
    main()
