import copy
import inspect

import torch.nn as nn


class Registry:
    def __init__(self, name):
        self._name = name
        self._module_dict = {}

    def get(self, key):
        return self._module_dict.get(key)

    def register_module(self, name=None, force=False, module=None):
        def _register(cls):
            key = name or cls.__name__
            if not force and key in self._module_dict:
                raise KeyError(f"{key} is already registered in {self._name}")
            self._module_dict[key] = cls
            return cls

        if module is not None:
            return _register(module)
        return _register

    def build(self, cfg, **default_args):
        return build_from_cfg(cfg, self, default_args)


def build_from_cfg(cfg, registry, default_args=None):
    if not isinstance(cfg, dict) or "type" not in cfg:
        raise TypeError(f"cfg must be a dict containing the key 'type', got {cfg}")
    args = copy.deepcopy(cfg)
    for k, v in (default_args or {}).items():
        args.setdefault(k, v)
    obj_type = args.pop("type")
    obj_cls = registry.get(obj_type) if isinstance(obj_type, str) else obj_type
    if obj_cls is None or not inspect.isclass(obj_cls):
        raise KeyError(f"{obj_type} is not in the {registry._name} registry")
    return obj_cls(**args)


MODELS = Registry("models")
NORM_LAYERS = Registry("norm layer")
ACTIVATION_LAYERS = Registry("activation layer")
for _cls in (nn.BatchNorm2d, nn.GroupNorm):
    NORM_LAYERS.register_module(module=_cls)
NORM_LAYERS.register_module(name="BN", module=nn.BatchNorm2d)
NORM_LAYERS.register_module(name="GN", module=nn.GroupNorm)
for _cls in (nn.ReLU, nn.SiLU, nn.GELU):
    ACTIVATION_LAYERS.register_module(module=_cls)


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, norm_cfg=None, act_cfg=None):
        super().__init__()
        act_cfg = dict(type="ReLU") if act_cfg is None else act_cfg
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, bias=norm_cfg is None)
        self.norm = None
        if norm_cfg is not None:
            norm_cfg = dict(norm_cfg)
            if norm_cfg["type"] == "GN":
                self.norm = NORM_LAYERS.build(norm_cfg, num_channels=out_channels)
            else:
                self.norm = NORM_LAYERS.build(norm_cfg, num_features=out_channels)
        self.activate = ACTIVATION_LAYERS.build(act_cfg) if act_cfg else None

    def forward(self, x):
        x = self.conv(x)
        if self.norm is not None:
            x = self.norm(x)
        if self.activate is not None:
            x = self.activate(x)
        return x
