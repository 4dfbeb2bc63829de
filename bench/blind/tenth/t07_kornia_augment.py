"""kornia-style batch augmentation: random parameters per sample, per-sample apply flags, same_on_batch."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


class _BasicAugmentation(nn.Module):
    def __init__(self, p=0.5, same_on_batch=False, keepdim=False):
        super().__init__()
        self.p = p
        self.same_on_batch = same_on_batch
        self.keepdim = keepdim
        self._params = None

    def generate_parameters(self, batch_shape):
        raise NotImplementedError

    def apply_transform(self, input, params):
        raise NotImplementedError

    def forward(self, input, params=None):
        batch_size = input.shape[0]
        if params is None:
            if self.same_on_batch:
                to_apply = torch.full((batch_size,), random.random() < self.p, dtype=torch.bool)
            else:
                to_apply = torch.rand(batch_size) < self.p
            params = self.generate_parameters(input.shape)
            params["batch_prob"] = to_apply
        self._params = params
        output = input.clone()
        if params["batch_prob"].any():
            idx = params["batch_prob"].nonzero(as_tuple=True)[0]
            sub = {k: v[idx] if isinstance(v, torch.Tensor) and v.shape[:1] == (batch_size,) else v
                   for k, v in params.items()}
            output[idx] = self.apply_transform(input[idx], sub)
        return output


class RandomAffine(_BasicAugmentation):
    def __init__(self, degrees=15.0, translate=0.1, **kw):
        super().__init__(**kw)
        self.degrees = degrees
        self.translate = translate

    def generate_parameters(self, batch_shape):
        b = batch_shape[0]
        angle = (torch.rand(b) * 2 - 1) * self.degrees
        shift = (torch.rand(b, 2) * 2 - 1) * self.translate
        return {"angle": angle, "translations": shift}

    def apply_transform(self, input, params):
        theta = params["angle"] * torch.pi / 180
        cos, sin = theta.cos(), theta.sin()
        mat = torch.stack([torch.stack([cos, -sin, params["translations"][:, 0]], -1),
                           torch.stack([sin, cos, params["translations"][:, 1]], -1)], 1)
        grid = F.affine_grid(mat, list(input.shape), align_corners=False)
        return F.grid_sample(input, grid, align_corners=False)


class ColorJitter(_BasicAugmentation):
    def __init__(self, brightness=0.2, contrast=0.2, **kw):
        super().__init__(**kw)
        self.brightness = brightness
        self.contrast = contrast

    def generate_parameters(self, batch_shape):
        b = batch_shape[0]
        return {"brightness": 1 + (torch.rand(b) * 2 - 1) * self.brightness,
                "contrast": 1 + (torch.rand(b) * 2 - 1) * self.contrast}

    def apply_transform(self, input, params):
        mean = input.mean(dim=(1, 2, 3), keepdim=True)
        out = (input - mean) * params["contrast"][:, None, None, None] + mean
        return (out * params["brightness"][:, None, None, None]).clamp(0, 1)


class AugmentationSequential(nn.Sequential):
    def forward(self, x):
        for aug in self.children():
            x = aug(x)
        return x


def main():
    torch.manual_seed(0)
    random.seed(0)
    pipeline = torch.compile(AugmentationSequential(
        RandomAffine(degrees=10.0, p=0.7),
        ColorJitter(p=0.5, same_on_batch=True),
    ))
    for batch in (8, 8, 4):
        imgs = torch.rand(batch, 3, 16, 16)
        out = pipeline(imgs)
        assert out.shape == imgs.shape


if __name__ == "__main__":
    main()
