"""RetinaNet-style multi-level post-processing: per-level top-k, class-aware NMS via coordinate offsets, result dicts."""
import torch
import torch.nn as nn


def box_iou(a, b):
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    lt = torch.max(a[:, None, :2], b[:, :2])
    rb = torch.min(a[:, None, 2:], b[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter / (area_a[:, None] + area_b - inter)


def nms(boxes, scores, iou_threshold):
    order = scores.argsort(descending=True)
    boxes = boxes[order]
    iou = box_iou(boxes, boxes).triu_(diagonal=1)
    keep = iou.max(dim=0).values <= iou_threshold
    return order[keep]


def batched_nms(boxes, scores, idxs, iou_threshold):
    if boxes.numel() == 0:
        return torch.empty((0,), dtype=torch.int64)
    max_coordinate = boxes.max()
    offsets = idxs.to(boxes) * (max_coordinate + 1)
    return nms(boxes + offsets[:, None], scores, iou_threshold)


class RetinaPostProcessor(nn.Module):
    def __init__(self, num_classes, score_thresh=0.05, nms_thresh=0.5, topk_candidates=50, detections_per_img=20):
        super().__init__()
        self.num_classes = num_classes
        self.score_thresh = score_thresh
        self.nms_thresh = nms_thresh
        self.topk_candidates = topk_candidates
        self.detections_per_img = detections_per_img

    def forward(self, cls_logits_per_level, boxes_per_level, image_size):
        all_boxes, all_scores, all_labels = [], [], []
        for logits, boxes in zip(cls_logits_per_level, boxes_per_level):
            scores = logits.sigmoid().flatten()
            keep = scores > self.score_thresh
            scores = scores[keep]
            topk_idxs = torch.where(keep)[0]
            num_topk = min(self.topk_candidates, topk_idxs.size(0))
            scores, idxs = scores.topk(num_topk)
            topk_idxs = topk_idxs[idxs]
            anchor_idxs = topk_idxs // self.num_classes
            labels = topk_idxs % self.num_classes
            b = boxes[anchor_idxs]
            b[:, 0::2] = b[:, 0::2].clamp(0, image_size[1])
            b[:, 1::2] = b[:, 1::2].clamp(0, image_size[0])
            all_boxes.append(b)
            all_scores.append(scores)
            all_labels.append(labels)
        boxes = torch.cat(all_boxes)
        scores = torch.cat(all_scores)
        labels = torch.cat(all_labels)
        keep = batched_nms(boxes, scores, labels, self.nms_thresh)[: self.detections_per_img]
        return {"boxes": boxes[keep], "scores": scores[keep], "labels": labels[keep].tolist()}


def fake_level(n_anchors, num_classes, size):
    xy = torch.rand(n_anchors, 2) * size
    wh = torch.rand(n_anchors, 2) * 16 + 4
    return torch.randn(n_anchors, num_classes) - 1.5, torch.cat([xy, xy + wh], dim=1)


def main():
    torch.manual_seed(0)
    post = RetinaPostProcessor(num_classes=5)
    post.compile(backend="eager")
    for size, levels in (((64, 64), (48, 12)), ((96, 64), (96, 24, 6))):
        lv = [fake_level(n, 5, max(size)) for n in levels]
        post([l for l, _ in lv], [b for _, b in lv], size)
