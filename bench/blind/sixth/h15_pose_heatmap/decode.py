"""Heatmap -> keypoint decoding (argmax + quarter-pixel refinement, like SimpleBaseline)."""
import torch

FLIP_PAIRS = [(1, 2), (3, 4), (5, 6)]


def get_max_preds(heatmaps):
    B, K, H, W = heatmaps.shape
    flat = heatmaps.reshape(B, K, -1)
    maxvals, idx = flat.max(dim=-1)
    xs = (idx % W).float()
    ys = torch.div(idx, W, rounding_mode="floor").float()
    preds = torch.stack([xs, ys], dim=-1)
    preds = preds * (maxvals[..., None] > 0).float()
    return preds, maxvals


def refine(heatmaps, preds):
    B, K, H, W = heatmaps.shape
    for b in range(B):
        for k in range(K):
            hm = heatmaps[b, k]
            px, py = int(preds[b, k, 0] + 0.5), int(preds[b, k, 1] + 0.5)
            if 1 < px < W - 1 and 1 < py < H - 1:
                diff = torch.stack([hm[py, px + 1] - hm[py, px - 1], hm[py + 1, px] - hm[py - 1, px]])
                preds[b, k] += diff.sign() * 0.25
    return preds


def flip_back(heatmaps):
    heatmaps = heatmaps.flip(-1)
    out = heatmaps.clone()
    for a, b in FLIP_PAIRS:
        out[:, a], out[:, b] = heatmaps[:, b], heatmaps[:, a]
    return out
