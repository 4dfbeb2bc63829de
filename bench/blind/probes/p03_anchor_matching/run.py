"""Matcher that assigns ground-truth boxes to anchors, compiled as a method on the head."""
import torch
import torch.nn as nn

from .anchors import AnchorConfig, grid_anchors, pairwise_iou, subsample_labels


class Matcher:
    BELOW_LOW, BETWEEN = -1, -2

    def __init__(self, high, low, allow_low_quality):
        self.high, self.low = high, low
        self.allow_low_quality = allow_low_quality

    def __call__(self, iou):
        if iou.numel() == 0:
            return iou.new_full((iou.size(1),), 0, dtype=torch.long), iou.new_full((iou.size(1),), -1, dtype=torch.int8)
        vals, matches = iou.max(dim=0)
        labels = torch.ones_like(matches, dtype=torch.int8)
        labels[vals < self.low] = 0
        labels[(vals >= self.low) & (vals < self.high)] = -1
        if self.allow_low_quality:
            best, _ = iou.max(dim=1)
            _, pred_inds = torch.nonzero(iou == best[:, None], as_tuple=True)
            labels[pred_inds] = 1
        return matches, labels


class RPNHead(nn.Module):
    def __init__(self, cfg: AnchorConfig):
        super().__init__()
        self.cfg = cfg
        self.matcher = Matcher(cfg.fg_iou, cfg.bg_iou, cfg.allow_low_quality)
        self.conv = nn.Conv2d(8, 8, 3, padding=1)
        self.cls = nn.Conv2d(8, len(cfg.aspect_ratios), 1)
        self.reg = nn.Conv2d(8, 4 * len(cfg.aspect_ratios), 1)

    def forward(self, feats):
        logits, deltas = [], []
        for f in feats:
            t = torch.relu(self.conv(f))
            logits.append(self.cls(t).permute(0, 2, 3, 1).reshape(f.size(0), -1))
            deltas.append(self.reg(t).permute(0, 2, 3, 1).reshape(f.size(0), -1, 4))
        return torch.cat(logits, 1), torch.cat(deltas, 1)

    @torch.compile
    def losses(self, feats, gt_boxes):
        logits, deltas = self(feats)
        anchors = grid_anchors([f.shape[-2:] for f in feats], self.cfg)
        total = logits.new_zeros(())
        for i, gt in enumerate(gt_boxes):
            iou = pairwise_iou(gt, anchors)
            matched, labels = self.matcher(iou)
            pos, neg = subsample_labels(labels, self.cfg.batch_per_image, self.cfg.positive_fraction)
            idx = torch.cat([pos, neg])
            target = (labels[idx] == 1).float()
            total = total + nn.functional.binary_cross_entropy_with_logits(logits[i, idx], target)
            if pos.numel() > 0:
                total = total + nn.functional.smooth_l1_loss(deltas[i, pos], gt[matched[pos]] / 64.0)
        return total / len(gt_boxes)


def main():
    torch.manual_seed(0)
    head = RPNHead(AnchorConfig())
    feats = [torch.randn(2, 8, 8, 8), torch.randn(2, 8, 4, 4)]
    for n_gt in (3, 5):
        gts = []
        for _ in range(2):
            xy = torch.rand(n_gt, 2) * 48
            gts.append(torch.cat([xy, xy + 16 + torch.rand(n_gt, 2) * 16], 1))
        loss = head.losses(feats, gts)
        loss.backward()
    return float(loss)
