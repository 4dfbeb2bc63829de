"""RetinaNet-style post-processing: box decoding, score filtering and class-aware NMS."""
import math
from typing import Dict, List, Tuple

import torch
from torch import Tensor


class BoxCoder:
    def __init__(self, weights: Tuple[float, float, float, float], bbox_xform_clip: float = math.log(1000.0 / 16)):
        self.weights = weights
        self.bbox_xform_clip = bbox_xform_clip

    def decode_single(self, rel_codes: Tensor, boxes: Tensor) -> Tensor:
        boxes = boxes.to(rel_codes.dtype)
        widths = boxes[:, 2] - boxes[:, 0]
        heights = boxes[:, 3] - boxes[:, 1]
        ctr_x = boxes[:, 0] + 0.5 * widths
        ctr_y = boxes[:, 1] + 0.5 * heights
        wx, wy, ww, wh = self.weights
        dx = rel_codes[:, 0::4] / wx
        dy = rel_codes[:, 1::4] / wy
        dw = torch.clamp(rel_codes[:, 2::4] / ww, max=self.bbox_xform_clip)
        dh = torch.clamp(rel_codes[:, 3::4] / wh, max=self.bbox_xform_clip)
        pred_ctr_x = dx * widths[:, None] + ctr_x[:, None]
        pred_ctr_y = dy * heights[:, None] + ctr_y[:, None]
        pred_w = torch.exp(dw) * widths[:, None]
        pred_h = torch.exp(dh) * heights[:, None]
        return torch.stack([pred_ctr_x - 0.5 * pred_w, pred_ctr_y - 0.5 * pred_h,
                            pred_ctr_x + 0.5 * pred_w, pred_ctr_y + 0.5 * pred_h], dim=2).flatten(1)


def box_iou(a: Tensor, b: Tensor) -> Tensor:
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    lt = torch.max(a[:, None, :2], b[:, :2])
    rb = torch.min(a[:, None, 2:], b[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter / (area_a[:, None] + area_b - inter)


def nms(boxes: Tensor, scores: Tensor, iou_threshold: float) -> Tensor:
    order = scores.argsort(descending=True)
    keep = []
    while order.numel() > 0:
        i = order[0]
        keep.append(i)
        if order.numel() == 1:
            break
        ious = box_iou(boxes[i].unsqueeze(0), boxes[order[1:]]).squeeze(0)
        order = order[1:][ious <= iou_threshold]
    return torch.stack(keep) if keep else boxes.new_zeros(0, dtype=torch.long)


def batched_nms(boxes: Tensor, scores: Tensor, idxs: Tensor, iou_threshold: float) -> Tensor:
    if boxes.numel() == 0:
        return torch.empty((0,), dtype=torch.int64)
    max_coordinate = boxes.max()
    offsets = idxs.to(boxes) * (max_coordinate + 1)
    return nms(boxes + offsets[:, None], scores, iou_threshold)


def clip_boxes_to_image(boxes: Tensor, size: Tuple[int, int]) -> Tensor:
    h, w = size
    x = boxes[..., 0::2].clamp(min=0, max=w)
    y = boxes[..., 1::2].clamp(min=0, max=h)
    return torch.stack((x, y), dim=-1).reshape(boxes.shape)


class RetinaPostProcessor:
    def __init__(self, score_thresh=0.05, nms_thresh=0.5, detections_per_img=10, topk_candidates=20):
        self.box_coder = BoxCoder(weights=(1.0, 1.0, 1.0, 1.0))
        self.score_thresh = score_thresh
        self.nms_thresh = nms_thresh
        self.detections_per_img = detections_per_img
        self.topk_candidates = topk_candidates

    def __call__(self, cls_logits: List[Tensor], bbox_regression: List[Tensor], anchors: List[Tensor],
                 image_sizes: List[Tuple[int, int]]) -> List[Dict[str, Tensor]]:
        detections = []
        for logits, deltas, anchors_i, size in zip(cls_logits, bbox_regression, anchors, image_sizes):
            num_classes = logits.shape[-1]
            scores = torch.sigmoid(logits).flatten()
            keep = scores > self.score_thresh
            scores = scores[keep]
            topk_idxs = torch.where(keep)[0]
            num_topk = min(self.topk_candidates, topk_idxs.size(0))
            scores, idxs = scores.topk(num_topk)
            topk_idxs = topk_idxs[idxs]
            anchor_idxs = torch.div(topk_idxs, num_classes, rounding_mode="floor")
            labels = topk_idxs % num_classes
            boxes = self.box_coder.decode_single(deltas[anchor_idxs], anchors_i[anchor_idxs])
            boxes = clip_boxes_to_image(boxes, size)
            keep = batched_nms(boxes, scores, labels, self.nms_thresh)[: self.detections_per_img]
            detections.append({"boxes": boxes[keep], "scores": scores[keep], "labels": labels[keep]})
        return detections


def random_anchors(n, size):
    xy = torch.rand(n, 2) * torch.tensor(size[::-1]) * 0.8
    wh = torch.rand(n, 2) * 20 + 4
    return torch.cat([xy, xy + wh], dim=1)


def main():
    torch.manual_seed(0)
    post = RetinaPostProcessor()
    postprocess = torch.compile(post.__call__)
    num_classes = 3
    for sizes in ([(64, 80), (48, 48)], [(96, 64)]):
        n = [50 + 10 * i for i in range(len(sizes))]
        logits = [torch.randn(k, num_classes) for k in n]
        deltas = [torch.randn(k, 4) * 0.1 for k in n]
        anchors = [random_anchors(k, s) for k, s in zip(n, sizes)]
        dets = postprocess(logits, deltas, anchors, sizes)
        print([(d["boxes"].shape[0], d["labels"].tolist()[:3]) for d in dets])
        post.score_thresh = 0.3


if __name__ == "__main__":
    main()
