"""Residual GroupNorm conv block of a diffusion U-Net, compiled once for any batch and resolution."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResBlock(nn.Module):
    def __init__(self, cin, cout, temb_dim=16, groups=4):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.temb_proj = nn.Linear(temb_dim, cout)
        self.norm2 = nn.GroupNorm(groups, cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, temb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.temb_proj(F.silu(temb))[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return self.skip(x) + h


def main():
    torch.manual_seed(0)
    block = torch.compile(ResBlock(8, 16).eval(), dynamic=True)
    with torch.no_grad():
        for bs, res in [(2, 10), (4, 10), (3, 14), (2, 12)]:
            x = torch.randn(bs, 8, res, res)
            temb = torch.randn(bs, 16)
            print(block(x, temb).shape)


if __name__ == "__main__":
    main()
