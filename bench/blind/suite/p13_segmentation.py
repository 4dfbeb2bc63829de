"""Semantic segmentation: a small encoder-decoder head with an auxiliary loss, and instance extraction."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SegHead(nn.Module):
    def __init__(self, in_ch=3, n_classes=4):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(in_ch, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.cls = nn.Conv2d(8, n_classes, 1)
        self.aux = nn.Conv2d(8, n_classes, 1)

    def forward(self, img, target=None):
        feats = self.enc(img)
        logits = F.interpolate(self.cls(feats), size=img.shape[-2:], mode="bilinear", align_corners=False)
        if self.training and target is not None:
            aux = F.interpolate(self.aux(feats), size=img.shape[-2:], mode="bilinear", align_corners=False)
            return F.cross_entropy(logits, target) + 0.4 * F.cross_entropy(aux, target)
        return logits


def instances_per_image(label_map):
    out = []
    for b in range(label_map.shape[0]):
        ids = torch.unique(label_map[b])
        masks = label_map[b][None] == ids[:, None, None]
        out.append(masks.flatten(1).sum(1))
    return out


def mean_iou(pred, target, n_classes):
    ious = []
    for c in range(n_classes):
        inter = ((pred == c) & (target == c)).sum()
        union = ((pred == c) | (target == c)).sum()
        if union == 0:
            continue
        ious.append(inter.float() / union.float())
    return torch.stack(ious).mean()


def main():
    torch.manual_seed(0)
    model = SegHead()
    model.compile(backend="eager")
    img = torch.randn(2, 3, 16, 16)
    tgt = torch.randint(0, 4, (2, 16, 16))
    model.train()
    model(img, tgt)
    model.eval()
    with torch.no_grad():
        pred = model(img).argmax(1)
        model(torch.randn(2, 3, 16, 16))

    inst = torch.compile(instances_per_image, backend="eager")
    inst(pred)
    inst(tgt)

    miou = torch.compile(mean_iou, backend="eager")
    miou(pred, tgt, 4)
    miou(tgt, tgt, 4)
