import torch
import torch.nn as nn

from .necks import FPN, TinyResNet  # noqa: F401  (registers the classes)
from .registry import MODELS

model_cfg = dict(
    backbone=dict(type="TinyResNet", base_channels=8, num_stages=3, out_indices=(0, 1, 2),
                  norm_cfg=dict(type="GN", num_groups=4)),
    neck=dict(type="FPN", in_channels=[8, 16, 32], out_channels=16, num_outs=4, add_extra_convs="on_output",
              act_cfg=dict(type="SiLU")),
)


class SingleStageFeatureExtractor(nn.Module):
    def __init__(self, backbone, neck):
        super().__init__()
        self.backbone = MODELS.build(backbone)
        self.neck = MODELS.build(neck)
        self.cls_convs = nn.Conv2d(16, 3, 3, padding=1)

    def forward(self, img):
        feats = self.neck(self.backbone(img))
        return [self.cls_convs(f) for f in feats]


def main():
    torch.manual_seed(0)
    detector = SingleStageFeatureExtractor(**model_cfg)
    compiled = torch.compile(detector)
    opt = torch.optim.SGD(detector.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    for _ in range(3):
        cls_scores = compiled(torch.randn(2, 3, 64, 64))
        loss = sum(s.sigmoid().mean() for s in cls_scores)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert [s.shape[-1] for s in cls_scores] == [16, 8, 4, 2]
