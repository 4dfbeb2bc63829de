"""detectron2-style FastRCNNOutputLayers with the per-image inference post-processing compiled."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


def box_iou(a, b):
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    lt = torch.max(a[:, None, :2], b[None, :, :2])
    rb = torch.min(a[:, None, 2:], b[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter / (area_a[:, None] + area_b[None, :] - inter + 1e-6)


@torch.compiler.disable
def batched_nms(boxes, scores, idxs, iou_threshold):
    """Greedy class-aware NMS (stand-in for torchvision.ops.batched_nms, a custom kernel)."""
    if boxes.numel() == 0:
        return torch.empty((0,), dtype=torch.int64)
    offsets = idxs.to(boxes) * (boxes.max() + 1)
    boxes = boxes + offsets[:, None]
    order = scores.argsort(descending=True)
    keep = []
    while order.numel() > 0:
        i = order[0]
        keep.append(i)
        if order.numel() == 1:
            break
        ious = box_iou(boxes[i][None], boxes[order[1:]])[0]
        order = order[1:][ious <= iou_threshold]
    return torch.stack(keep)


class Box2BoxTransform:
    def __init__(self, weights=(10.0, 10.0, 5.0, 5.0), scale_clamp=4.135):
        self.weights = weights
        self.scale_clamp = scale_clamp

    def apply_deltas(self, deltas, boxes):
        widths = boxes[:, 2] - boxes[:, 0]
        heights = boxes[:, 3] - boxes[:, 1]
        ctr_x = boxes[:, 0] + 0.5 * widths
        ctr_y = boxes[:, 1] + 0.5 * heights
        wx, wy, ww, wh = self.weights
        dx = deltas[:, 0::4] / wx
        dy = deltas[:, 1::4] / wy
        dw = torch.clamp(deltas[:, 2::4] / ww, max=self.scale_clamp)
        dh = torch.clamp(deltas[:, 3::4] / wh, max=self.scale_clamp)
        pred_ctr_x = dx * widths[:, None] + ctr_x[:, None]
        pred_ctr_y = dy * heights[:, None] + ctr_y[:, None]
        pred_w = torch.exp(dw) * widths[:, None]
        pred_h = torch.exp(dh) * heights[:, None]
        x1 = pred_ctr_x - 0.5 * pred_w
        y1 = pred_ctr_y - 0.5 * pred_h
        x2 = pred_ctr_x + 0.5 * pred_w
        y2 = pred_ctr_y + 0.5 * pred_h
        return torch.stack((x1, y1, x2, y2), dim=-1).reshape(deltas.shape)


def fast_rcnn_inference_single_image(boxes, scores, image_shape, score_thresh, nms_thresh, topk_per_image):
    valid_mask = torch.isfinite(boxes).all(dim=1) & torch.isfinite(scores).all(dim=1)
    if not valid_mask.all():
        boxes = boxes[valid_mask]
        scores = scores[valid_mask]

    scores = scores[:, :-1]
    num_bbox_reg_classes = boxes.shape[1] // 4
    boxes = boxes.reshape(-1, 4)
    h, w = image_shape
    boxes = torch.stack([boxes[:, 0].clamp(0, w), boxes[:, 1].clamp(0, h),
                         boxes[:, 2].clamp(0, w), boxes[:, 3].clamp(0, h)], dim=1)
    boxes = boxes.view(-1, num_bbox_reg_classes, 4)

    filter_mask = scores > score_thresh
    filter_inds = filter_mask.nonzero()
    if num_bbox_reg_classes == 1:
        boxes = boxes[filter_inds[:, 0], 0]
    else:
        boxes = boxes[filter_mask]
    scores = scores[filter_mask]

    keep = batched_nms(boxes, scores, filter_inds[:, 1], nms_thresh)
    if topk_per_image >= 0:
        keep = keep[:topk_per_image]
    return boxes[keep], scores[keep], filter_inds[keep, 1]


class FastRCNNOutputLayers(nn.Module):
    def __init__(self, in_features=32, num_classes=5, test_score_thresh=0.05, test_nms_thresh=0.5,
                 test_topk_per_image=20):
        super().__init__()
        self.num_classes = num_classes
        self.cls_score = nn.Linear(in_features, num_classes + 1)
        self.bbox_pred = nn.Linear(in_features, num_classes * 4)
        nn.init.normal_(self.cls_score.weight, std=0.01)
        nn.init.normal_(self.bbox_pred.weight, std=0.001)
        self.box2box_transform = Box2BoxTransform()
        self.test_score_thresh = test_score_thresh
        self.test_nms_thresh = test_nms_thresh
        self.test_topk_per_image = test_topk_per_image
        self._postprocess = torch.compile(fast_rcnn_inference_single_image)

    def forward(self, x):
        if x.dim() > 2:
            x = torch.flatten(x, start_dim=1)
        return self.cls_score(x), self.bbox_pred(x)

    def inference(self, predictions, proposals, image_sizes):
        scores, deltas = predictions
        num_per_image = [len(p) for p in proposals]
        boxes = self.box2box_transform.apply_deltas(deltas, torch.cat(proposals))
        probs = F.softmax(scores, dim=-1)
        results = []
        for b, s, shape in zip(boxes.split(num_per_image), probs.split(num_per_image), image_sizes):
            results.append(self._postprocess(b, s, shape, self.test_score_thresh, self.test_nms_thresh,
                                             self.test_topk_per_image))
        return results


def random_proposals(n, h, w, g):
    xy = torch.rand(n, 2, generator=g) * torch.tensor([w * 0.7, h * 0.7])
    wh = torch.rand(n, 2, generator=g) * torch.tensor([w * 0.3, h * 0.3]) + 2.0
    return torch.cat([xy, xy + wh], dim=1)


def main():
    torch.manual_seed(0)
    random.seed(0)
    g = torch.Generator().manual_seed(0)
    head = FastRCNNOutputLayers().eval()
    image_sizes = [(64, 80), (64, 80)]
    total = 0
    with torch.no_grad():
        for it in range(4):
            proposals = [random_proposals(24, h, w, g) for (h, w) in image_sizes]
            feats = torch.randn(sum(len(p) for p in proposals), 32, generator=g)
            preds = head(feats)
            for boxes, scores, classes in head.inference(preds, proposals, image_sizes):
                total += boxes.shape[0]
    return total


if __name__ == "__main__":
    print(main())
