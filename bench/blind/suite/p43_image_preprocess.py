"""Batched image preprocessing: dtype conversion, resizing by shape, centre crop, colour normalisation."""
import torch
import torch.nn.functional as F

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)
CROP_FRACTION = 0.875


def to_float(img):
    if img.dtype == torch.uint8:
        return img.float() / 255.0
    if not img.is_floating_point():
        return img.float()
    return img


def center_crop(img, frac=CROP_FRACTION):
    h, w = img.shape[-2:]
    ch, cw = int(h * frac), int(w * frac)
    top = (h - ch) // 2
    left = (w - cw) // 2
    return img[..., top : top + ch, left : left + cw]


def preprocess(img, size=12):
    if img.dim() == 3:
        img = img.unsqueeze(0)
    img = to_float(img)
    if img.shape[1] == 1:
        img = img.expand(-1, 3, -1, -1)
    img = center_crop(img)
    if img.shape[-1] != size or img.shape[-2] != size:
        img = F.interpolate(img, size=(size, size), mode="bilinear", align_corners=False)
    mean = torch.tensor(MEAN, dtype=img.dtype).view(1, 3, 1, 1)
    std = torch.tensor(STD, dtype=img.dtype).view(1, 3, 1, 1)
    return (img - mean) / std


def denormalize(x):
    mean = torch.tensor(MEAN).view(1, 3, 1, 1)
    std = torch.tensor(STD).view(1, 3, 1, 1)
    out = (x * std + mean).clamp(0, 1)
    return (out * 255).round().to(torch.uint8) if torch.is_tensor(out) else out


def main():
    torch.manual_seed(0)
    pp = torch.compile(preprocess, backend="eager")
    pp(torch.randint(0, 255, (2, 3, 16, 16), dtype=torch.uint8))
    pp(torch.randint(0, 255, (2, 3, 16, 16), dtype=torch.uint8))
    dn = torch.compile(denormalize, backend="eager")
    dn(torch.randn(2, 3, 12, 12))
    dn(torch.randn(2, 3, 12, 12))
