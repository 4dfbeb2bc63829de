import torch

from .model import HeatmapNet, PoseEstimator


def keypoints_to_json(preds, scores, thr=0.1):
    people = []
    for kp, sc in zip(preds.tolist(), scores.tolist()):
        people.append([(x, y, s) for (x, y), s in zip(kp, sc) if s > thr])
    return people


def main():
    torch.manual_seed(0)
    est = PoseEstimator(HeatmapNet()).eval()
    infer = torch.compile(est)
    out = []
    with torch.no_grad():
        # batched validation crops
        for _ in range(2):
            preds, scores = infer(torch.randn(2, 3, 32, 24))
            out.extend(keypoints_to_json(preds, scores))
        # single crop from the demo camera, fast path without refinement
        preds, scores = infer(torch.randn(3, 32, 24), refine_subpixel=False)
        out.extend(keypoints_to_json(preds, scores))
    return out
