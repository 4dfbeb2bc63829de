import torch
import torch.nn as nn

from .decode import flip_back, get_max_preds, refine


class HeatmapNet(nn.Module):
    def __init__(self, n_joints=7, width=16):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, width, 3, 2, 1), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, width, 3, 2, 1), nn.BatchNorm2d(width), nn.ReLU(),
        )
        self.deconv = nn.Sequential(nn.ConvTranspose2d(width, width, 4, 2, 1), nn.ReLU())
        self.final = nn.Conv2d(width, n_joints, 1)

    def forward(self, x):
        return self.final(self.deconv(self.backbone(x)))


class PoseEstimator(nn.Module):
    def __init__(self, net, flip_test=True, stride=2):
        super().__init__()
        self.net = net
        self.flip_test = flip_test
        self.stride = stride

    def forward(self, img, refine_subpixel=True):
        if img.dim() == 3:
            img = img.unsqueeze(0)
        hm = self.net(img)
        if self.flip_test:
            hm = 0.5 * (hm + flip_back(self.net(img.flip(-1))))
        preds, maxvals = get_max_preds(hm)
        if refine_subpixel:
            preds = refine(hm, preds)
        return preds * self.stride, maxvals
