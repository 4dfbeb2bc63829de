"""Detection post-processing: box decoding, score filtering and class-wise NMS (YOLO/RetinaNet style)."""
import torch


def decode_boxes(deltas, anchors, weights=(10.0, 10.0, 5.0, 5.0), clip=4.135):
    wx, wy, ww, wh = weights
    widths = anchors[:, 2] - anchors[:, 0]
    heights = anchors[:, 3] - anchors[:, 1]
    ctr_x = anchors[:, 0] + 0.5 * widths
    ctr_y = anchors[:, 1] + 0.5 * heights
    dx, dy = deltas[:, 0] / wx, deltas[:, 1] / wy
    dw = (deltas[:, 2] / ww).clamp(max=clip)
    dh = (deltas[:, 3] / wh).clamp(max=clip)
    px, py = dx * widths + ctr_x, dy * heights + ctr_y
    pw, ph = torch.exp(dw) * widths, torch.exp(dh) * heights
    return torch.stack([px - 0.5 * pw, py - 0.5 * ph, px + 0.5 * pw, py + 0.5 * ph], dim=1)


def box_iou(a, b):
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    lt = torch.max(a[:, None, :2], b[None, :, :2])
    rb = torch.min(a[:, None, 2:], b[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter / (area_a[:, None] + area_b[None, :] - inter)


def nms(boxes, scores, iou_thresh):
    order = scores.argsort(descending=True)
    keep = []
    while order.numel() > 0:
        i = order[0]
        keep.append(i)
        if order.numel() == 1:
            break
        ious = box_iou(boxes[i][None], boxes[order[1:]])[0]
        order = order[1:][ious <= iou_thresh]
    return torch.stack(keep) if keep else boxes.new_zeros(0, dtype=torch.long)


@torch.compile
def postprocess(deltas, logits, anchors, score_thresh, iou_thresh=0.5, max_det=100):
    boxes = decode_boxes(deltas, anchors)
    scores, labels = logits.sigmoid().max(dim=1)
    keep = scores > score_thresh
    boxes, scores, labels = boxes[keep], scores[keep], labels[keep]
    # batched NMS trick: offset boxes per class
    offsets = labels.to(boxes) * (boxes.max() + 1)
    kept = nms(boxes + offsets[:, None], scores, iou_thresh)
    kept = kept[:max_det]
    return boxes[kept], scores[kept], labels[kept]


def main():
    torch.manual_seed(0)
    n = 64
    xy = torch.rand(n, 2) * 100
    anchors = torch.cat([xy, xy + 10 + torch.rand(n, 2) * 20], dim=1)
    for thresh in (0.3, 0.5, 0.6):
        deltas = torch.randn(n, 4) * 0.1
        logits = torch.randn(n, 5)
        out = postprocess(deltas, logits, anchors, thresh)
    return [o.shape for o in out]


if __name__ == "__main__":
    print(main())
