"""Mask R-CNN inference post-processing: resize boxes and paste masks into the image."""
from typing import Dict, List, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def expand_boxes(boxes: Tensor, scale: float) -> Tensor:
    w_half = (boxes[:, 2] - boxes[:, 0]) * 0.5
    h_half = (boxes[:, 3] - boxes[:, 1]) * 0.5
    x_c = (boxes[:, 2] + boxes[:, 0]) * 0.5
    y_c = (boxes[:, 3] + boxes[:, 1]) * 0.5
    w_half = w_half * scale
    h_half = h_half * scale
    return torch.stack([x_c - w_half, y_c - h_half, x_c + w_half, y_c + h_half], dim=1)


def expand_masks(mask: Tensor, padding: int) -> Tuple[Tensor, float]:
    M = mask.shape[-1]
    scale = float(M + 2 * padding) / M
    return F.pad(mask, (padding,) * 4), scale


def paste_mask_in_image(mask: Tensor, box: Tensor, im_h: int, im_w: int) -> Tensor:
    TO_REMOVE = 1
    w = int(box[2] - box[0] + TO_REMOVE)
    h = int(box[3] - box[1] + TO_REMOVE)
    w = max(w, 1)
    h = max(h, 1)
    mask = mask.expand((1, 1, -1, -1))
    mask = F.interpolate(mask, size=(h, w), mode="bilinear", align_corners=False)[0][0]
    im_mask = torch.zeros((im_h, im_w), dtype=mask.dtype, device=mask.device)
    x_0, x_1 = max(int(box[0]), 0), min(int(box[2]) + 1, im_w)
    y_0, y_1 = max(int(box[1]), 0), min(int(box[3]) + 1, im_h)
    im_mask[y_0:y_1, x_0:x_1] = mask[(y_0 - int(box[1])) : (y_1 - int(box[1])), (x_0 - int(box[0])) : (x_1 - int(box[0]))]
    return im_mask


def paste_masks_in_image(masks: Tensor, boxes: Tensor, img_shape: Tuple[int, int], padding: int = 1) -> Tensor:
    masks, scale = expand_masks(masks, padding=padding)
    boxes = expand_boxes(boxes, scale).to(dtype=torch.int64)
    im_h, im_w = img_shape
    res = [paste_mask_in_image(m[0], b, im_h, im_w) for m, b in zip(masks, boxes)]
    if len(res) > 0:
        return torch.stack(res, dim=0)[:, None]
    return masks.new_empty((0, 1, im_h, im_w))


def resize_boxes(boxes: Tensor, original_size: List[int], new_size: List[int]) -> Tensor:
    ratios = [torch.tensor(s, dtype=torch.float32) / torch.tensor(s_orig, dtype=torch.float32)
              for s, s_orig in zip(new_size, original_size)]
    ratio_height, ratio_width = ratios
    xmin, ymin, xmax, ymax = boxes.unbind(1)
    return torch.stack((xmin * ratio_width, ymin * ratio_height, xmax * ratio_width, ymax * ratio_height), dim=1)


def postprocess(result: List[Dict[str, Tensor]], image_shapes: List[Tuple[int, int]],
                original_image_sizes: List[Tuple[int, int]], mask_threshold: float = 0.5) -> List[Dict[str, Tensor]]:
    for i, (pred, im_s, o_im_s) in enumerate(zip(result, image_shapes, original_image_sizes)):
        boxes = resize_boxes(pred["boxes"], im_s, o_im_s)
        result[i]["boxes"] = boxes
        if "masks" in pred:
            masks = paste_masks_in_image(pred["mask_probs"], boxes, o_im_s)
            result[i]["masks"] = masks > mask_threshold
    return result


def fake_predictions(num, im_size, with_masks=True):
    h, w = im_size
    xy = torch.rand(num, 2) * torch.tensor([w * 0.5, h * 0.5])
    wh = torch.rand(num, 2) * torch.tensor([w * 0.4, h * 0.4]) + 2
    pred = {"boxes": torch.cat([xy, xy + wh], 1), "scores": torch.rand(num)}
    if with_masks:
        pred["masks"] = None
        pred["mask_probs"] = torch.rand(num, 1, 7, 7)
    return pred


def main():
    torch.manual_seed(0)
    compiled_postprocess = torch.compile(postprocess)
    image_shapes = [(40, 48), (40, 32)]
    original_sizes = [(80, 96), (60, 48)]
    results = [fake_predictions(3, s) for s in image_shapes]
    out = compiled_postprocess(results, image_shapes, original_sizes)
    print([tuple(r["masks"].shape) for r in out])

    results = [fake_predictions(2, image_shapes[0], with_masks=False)]
    out = compiled_postprocess(results, image_shapes[:1], original_sizes[:1], mask_threshold=0.3)
    print([tuple(r["boxes"].shape) for r in out])


if __name__ == "__main__":
    main()
