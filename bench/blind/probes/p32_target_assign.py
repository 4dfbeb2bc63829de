"""YOLO-style dynamic target assignment (top-k cost per GT) written the way research code often is."""
import torch
import torch.nn.functional as F


@torch.compiler.disable
def debug_dump(name, t):
    return None


def center_prior(anchor_points, gt_boxes, radius=2.5, stride=8):
    cx = (gt_boxes[:, 0] + gt_boxes[:, 2]) / 2
    cy = (gt_boxes[:, 1] + gt_boxes[:, 3]) / 2
    dx = (anchor_points[None, :, 0] - cx[:, None]).abs()
    dy = (anchor_points[None, :, 1] - cy[:, None]).abs()
    return (dx < radius * stride) & (dy < radius * stride)


def iou_matrix(a, b):
    lt = torch.max(a[:, None, :2], b[None, :, :2])
    rb = torch.min(a[:, None, 2:], b[None, :, 2:])
    inter = (rb - lt).clamp(min=0).prod(-1)
    area_a = (a[:, 2:] - a[:, :2]).prod(-1)
    area_b = (b[:, 2:] - b[:, :2]).prod(-1)
    return inter / (area_a[:, None] + area_b[None] - inter)


@torch.compile
def assign(pred_boxes, pred_logits, anchor_points, gt_boxes, gt_labels, topk=4, verbose=False):
    num_gt = gt_boxes.shape[0]
    in_center = center_prior(anchor_points, gt_boxes)
    ious = iou_matrix(gt_boxes, pred_boxes)
    cls_cost = F.binary_cross_entropy_with_logits(
        pred_logits[None].expand(num_gt, -1, -1),
        F.one_hot(gt_labels, pred_logits.size(-1)).float()[:, None].expand(-1, pred_logits.size(0), -1),
        reduction="none").sum(-1)
    cost = cls_cost + 3.0 * (1 - ious) + 1e5 * (~in_center)
    # dynamic k: sum of the top IoUs per GT
    dynamic_ks = ious.topk(topk, dim=1).values.sum(1).int().clamp(min=1)
    matching = torch.zeros_like(cost)
    for g in range(num_gt):
        _, idx = cost[g].topk(int(dynamic_ks[g]), largest=False)
        matching[g, idx] = 1.0
    # resolve anchors claimed by several GTs
    conflicts = [(int(a), c) for a, c in enumerate(matching.sum(0)) if c > 1]
    for a, _ in sorted(conflicts, key=lambda p: p[1]):
        best = cost[:, a].argmin()
        matching[:, a] = 0
        matching[best, a] = 1
    if verbose:
        print(f"assigned {matching.sum()} anchors to {num_gt} gts")
        debug_dump("matching", matching)
    fg = matching.sum(0) > 0
    matched_gt = matching.argmax(0)
    return fg, matched_gt


def main():
    torch.manual_seed(0)
    n = 48
    pts = torch.rand(n, 2) * 64
    pred_boxes = torch.cat([pts - 6, pts + 6], 1)
    outs = []
    for num_gt, verbose in ((3, False), (4, True)):
        xy = torch.rand(num_gt, 2) * 48
        gt = torch.cat([xy, xy + 12], 1)
        outs.append(assign(pred_boxes, torch.randn(n, 5), pts, gt, torch.randint(0, 5, (num_gt,)), verbose=verbose))
    return [o[0].sum().item() for o in outs]


if __name__ == "__main__":
    print(main())
