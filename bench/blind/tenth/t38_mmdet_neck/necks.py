import torch.nn as nn
import torch.nn.functional as F

from .registry import MODELS, ConvModule


@MODELS.register_module()
class TinyResNet(nn.Module):
    def __init__(self, base_channels=8, num_stages=3, out_indices=(0, 1, 2), norm_cfg=dict(type="BN")):
        super().__init__()
        self.out_indices = out_indices
        self.stem = ConvModule(3, base_channels, 3, stride=2, padding=1, norm_cfg=norm_cfg)
        self.stages = nn.ModuleList()
        in_ch = base_channels
        for i in range(num_stages):
            out_ch = base_channels * 2 ** i
            self.stages.append(ConvModule(in_ch, out_ch, 3, stride=2, padding=1, norm_cfg=norm_cfg))
            in_ch = out_ch

    def forward(self, x):
        x = self.stem(x)
        outs = []
        for i, stage in enumerate(self.stages):
            x = stage(x)
            if i in self.out_indices:
                outs.append(x)
        return tuple(outs)


@MODELS.register_module()
class FPN(nn.Module):
    def __init__(self, in_channels, out_channels, num_outs, add_extra_convs="on_output", norm_cfg=None,
                 act_cfg=None, upsample_cfg=dict(mode="nearest")):
        super().__init__()
        self.in_channels = in_channels
        self.num_ins = len(in_channels)
        self.num_outs = num_outs
        self.add_extra_convs = add_extra_convs
        self.upsample_cfg = upsample_cfg.copy()
        self.lateral_convs = nn.ModuleList(
            [ConvModule(c, out_channels, 1, norm_cfg=norm_cfg, act_cfg=act_cfg) for c in in_channels])
        self.fpn_convs = nn.ModuleList(
            [ConvModule(out_channels, out_channels, 3, padding=1, norm_cfg=norm_cfg, act_cfg=act_cfg)
             for _ in in_channels])
        for _ in range(num_outs - self.num_ins):
            self.fpn_convs.append(ConvModule(out_channels, out_channels, 3, stride=2, padding=1, act_cfg=act_cfg))

    def forward(self, inputs):
        assert len(inputs) == len(self.in_channels)
        laterals = [conv(inputs[i]) for i, conv in enumerate(self.lateral_convs)]
        for i in range(self.num_ins - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] = laterals[i - 1] + F.interpolate(laterals[i], size=prev_shape, **self.upsample_cfg)
        outs = [self.fpn_convs[i](laterals[i]) for i in range(self.num_ins)]
        if self.num_outs > len(outs):
            extra_source = outs[-1] if self.add_extra_convs == "on_output" else inputs[-1]
            outs.append(self.fpn_convs[self.num_ins](extra_source))
            for i in range(self.num_ins + 1, self.num_outs):
                outs.append(self.fpn_convs[i](F.relu(outs[-1])))
        return tuple(outs)
