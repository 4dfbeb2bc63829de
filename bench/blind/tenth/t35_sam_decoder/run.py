import torch
import torch.nn as nn
import torch.nn.functional as F

from .mask_decoder import MaskDecoder
from .prompt_encoder import PromptEncoder


class SamLite(nn.Module):
    mask_threshold = 0.0

    def __init__(self):
        super().__init__()
        self.image_encoder = nn.Sequential(nn.Conv2d(3, 32, 8, 8), nn.GELU(), nn.Conv2d(32, 32, 1))
        self.prompt_encoder = PromptEncoder()
        self.mask_decoder = MaskDecoder()


class SamPredictor:
    def __init__(self, model):
        self.model = model
        self.features = None

    @torch.no_grad()
    def set_image(self, image):
        self.features = self.model.image_encoder(image)

    def predict_torch(self, point_coords=None, point_labels=None, boxes=None, mask_input=None,
                      multimask_output=True, return_logits=False):
        points = (point_coords, point_labels) if point_coords is not None else None
        sparse, dense = self.model.prompt_encoder(points=points, boxes=boxes, masks=mask_input)
        low_res_masks, iou_predictions = self.model.mask_decoder(
            self.features, self.model.prompt_encoder.get_dense_pe(), sparse, dense, multimask_output)
        masks = F.interpolate(low_res_masks, (64, 64), mode="bilinear", align_corners=False)
        if not return_logits:
            masks = masks > self.model.mask_threshold
        best = int(iou_predictions[0].argmax())
        return masks, iou_predictions, low_res_masks, best


def main():
    torch.manual_seed(0)
    predictor = SamPredictor(SamLite().eval())
    predictor.set_image(torch.randn(1, 3, 64, 64))
    predict = torch.compile(predictor.predict_torch)
    pts = torch.tensor([[[20.0, 30.0], [40.0, 12.0]]])
    lbl = torch.tensor([[1, 0]])
    box = torch.tensor([[10.0, 10.0, 50.0, 40.0]])
    with torch.no_grad():
        masks, iou, low_res, best = predict(pts, lbl)
        predict(pts, lbl, multimask_output=False)
        predict(boxes=box, multimask_output=False)
        predict(pts, lbl, boxes=box, mask_input=low_res[:, best:best + 1], return_logits=True)
    assert masks.shape[-2:] == (64, 64)
