"""Batched image augmentation on tensors: random resized crop, horizontal flip, colour jitter, normalisation."""
import torch
import torch.nn.functional as F

MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)


def random_resized_crop(img, out_size, scale=(0.5, 1.0)):
    _, _, h, w = img.shape
    area = h * w * torch.empty(1).uniform_(*scale)
    side = area.sqrt().clamp(max=min(h, w)).int()
    top = torch.randint(0, h - side.item() + 1, (1,)).item()
    left = torch.randint(0, w - side.item() + 1, (1,)).item()
    crop = img[:, :, top : top + side, left : left + side]
    return F.interpolate(crop, size=out_size, mode="bilinear", align_corners=False)


def color_jitter(img, brightness=0.2, contrast=0.2):
    b = img.shape[0]
    bf = 1 + (torch.rand(b, 1, 1, 1) * 2 - 1) * brightness
    cf = 1 + (torch.rand(b, 1, 1, 1) * 2 - 1) * contrast
    mean = img.mean(dim=(1, 2, 3), keepdim=True)
    return ((img * bf - mean) * cf + mean).clamp(0, 1)


@torch.compile(backend="eager")
def augment(img, out_size=(24, 24), flip_p=0.5, jitter=True):
    img = random_resized_crop(img, out_size)
    if torch.rand(1) < flip_p:
        img = img.flip(-1)
    if jitter:
        img = color_jitter(img)
    return (img - MEAN) / STD


def main():
    torch.manual_seed(0)
    for step in range(3):
        batch = torch.rand(4, 3, 32, 32)
        augment(batch, jitter=step < 2)
    augment(torch.rand(4, 3, 32, 32), out_size=(16, 16))
