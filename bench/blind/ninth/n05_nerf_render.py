"""NeRF: positional encoding, coarse/fine MLPs, hierarchical sampling and volume rendering."""
import math
import random
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class PositionalEncoding(nn.Module):
    def __init__(self, num_freqs, include_input=True, log_sampling=True):
        super().__init__()
        self.include_input = include_input
        if log_sampling:
            bands = 2.0 ** torch.linspace(0.0, num_freqs - 1, num_freqs)
        else:
            bands = torch.linspace(1.0, 2.0 ** (num_freqs - 1), num_freqs)
        self.register_buffer("freq_bands", bands, persistent=False)

    def forward(self, x):
        xb = x[..., None, :] * self.freq_bands[:, None]
        enc = torch.cat([torch.sin(xb), torch.cos(xb)], dim=-1).flatten(-2)
        return torch.cat([x, enc], dim=-1) if self.include_input else enc


class NeRFMLP(nn.Module):
    def __init__(self, depth=4, width=32, pos_freqs=6, dir_freqs=2, skips=(2,)):
        super().__init__()
        self.pos_enc = PositionalEncoding(pos_freqs)
        self.dir_enc = PositionalEncoding(dir_freqs)
        in_pos = 3 + 3 * 2 * pos_freqs
        in_dir = 3 + 3 * 2 * dir_freqs
        self.skips = skips
        layers = []
        for i in range(depth):
            d_in = in_pos if i == 0 else width + (in_pos if i in skips else 0)
            layers.append(nn.Linear(d_in, width))
        self.pts_linears = nn.ModuleList(layers)
        self.sigma = nn.Linear(width, 1)
        self.feature = nn.Linear(width, width)
        self.rgb = nn.Sequential(nn.Linear(width + in_dir, width // 2), nn.ReLU(), nn.Linear(width // 2, 3))

    def forward(self, pts, viewdirs):
        p = self.pos_enc(pts)
        h = p
        for i, layer in enumerate(self.pts_linears):
            if i in self.skips:
                h = torch.cat([p, h], dim=-1)
            h = F.relu(layer(h))
        sigma = self.sigma(h)
        d = self.dir_enc(viewdirs)[:, None, :].expand(-1, pts.shape[1], -1)
        rgb = self.rgb(torch.cat([self.feature(h), d], dim=-1))
        return torch.cat([rgb, sigma], dim=-1)


def raw2outputs(raw, z_vals, rays_d, raw_noise_std=0.0, white_bkgd=False):
    dists = z_vals[..., 1:] - z_vals[..., :-1]
    dists = torch.cat([dists, torch.full_like(dists[..., :1], 1e10)], dim=-1)
    dists = dists * torch.norm(rays_d[..., None, :], dim=-1)
    rgb = torch.sigmoid(raw[..., :3])
    noise = torch.randn_like(raw[..., 3]) * raw_noise_std if raw_noise_std > 0.0 else 0.0
    alpha = 1.0 - torch.exp(-F.relu(raw[..., 3] + noise) * dists)
    trans = torch.cumprod(torch.cat([torch.ones_like(alpha[..., :1]), 1.0 - alpha + 1e-10], dim=-1), dim=-1)
    weights = alpha * trans[..., :-1]
    rgb_map = torch.sum(weights[..., None] * rgb, dim=-2)
    depth_map = torch.sum(weights * z_vals, dim=-1)
    acc_map = torch.sum(weights, dim=-1)
    if white_bkgd:
        rgb_map = rgb_map + (1.0 - acc_map[..., None])
    return rgb_map, depth_map, acc_map, weights


def sample_pdf(bins, weights, n_samples, det=True):
    weights = weights + 1e-5
    pdf = weights / torch.sum(weights, dim=-1, keepdim=True)
    cdf = torch.cumsum(pdf, dim=-1)
    cdf = torch.cat([torch.zeros_like(cdf[..., :1]), cdf], dim=-1)
    if det:
        u = torch.linspace(0.0, 1.0, n_samples).expand(list(cdf.shape[:-1]) + [n_samples]).contiguous()
    else:
        u = torch.rand(list(cdf.shape[:-1]) + [n_samples])
    inds = torch.searchsorted(cdf, u, right=True)
    below = torch.clamp(inds - 1, min=0)
    above = torch.clamp(inds, max=cdf.shape[-1] - 1)
    inds_g = torch.stack([below, above], dim=-1)
    matched = [inds_g.shape[0], inds_g.shape[1], cdf.shape[-1]]
    cdf_g = torch.gather(cdf.unsqueeze(1).expand(matched), 2, inds_g)
    bins_g = torch.gather(bins.unsqueeze(1).expand(matched), 2, inds_g)
    denom = cdf_g[..., 1] - cdf_g[..., 0]
    denom = torch.where(denom < 1e-5, torch.ones_like(denom), denom)
    t = (u - cdf_g[..., 0]) / denom
    return bins_g[..., 0] + t * (bins_g[..., 1] - bins_g[..., 0])


class NeRFRenderer(nn.Module):
    def __init__(self, n_coarse=16, n_fine=16, near=2.0, far=6.0, check_numerics=True):
        super().__init__()
        self.coarse = NeRFMLP()
        self.fine = NeRFMLP()
        self.n_coarse, self.n_fine = n_coarse, n_fine
        self.near, self.far = near, far
        self.check_numerics = check_numerics

    def forward(self, rays_o, rays_d):
        viewdirs = rays_d / torch.norm(rays_d, dim=-1, keepdim=True)
        t = torch.linspace(0.0, 1.0, self.n_coarse)
        z_vals = (self.near * (1.0 - t) + self.far * t).expand(rays_o.shape[0], self.n_coarse)
        pts = rays_o[..., None, :] + rays_d[..., None, :] * z_vals[..., :, None]
        raw = self.coarse(pts, viewdirs)
        if self.check_numerics and torch.isnan(raw).any():
            warnings.warn("NaN detected in coarse network output")
        rgb0, _, _, weights = raw2outputs(raw, z_vals, rays_d)

        z_mid = 0.5 * (z_vals[..., 1:] + z_vals[..., :-1])
        z_samples = sample_pdf(z_mid, weights[..., 1:-1], self.n_fine).detach()
        z_all, _ = torch.sort(torch.cat([z_vals, z_samples], dim=-1), dim=-1)
        pts = rays_o[..., None, :] + rays_d[..., None, :] * z_all[..., :, None]
        raw = self.fine(pts, viewdirs)
        rgb, depth, acc, _ = raw2outputs(raw, z_all, rays_d)
        return rgb, rgb0, depth, acc


def get_rays(h, w, focal, c2w):
    i, j = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32), indexing="xy")
    dirs = np.stack([(i - w * 0.5) / focal, -(j - h * 0.5) / focal, -np.ones_like(i)], -1)
    rays_d = np.sum(dirs[..., None, :] * c2w[:3, :3], -1)
    rays_o = np.broadcast_to(c2w[:3, -1], rays_d.shape)
    return torch.from_numpy(rays_o.reshape(-1, 3).copy()), torch.from_numpy(rays_d.reshape(-1, 3).copy())


def main():
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    renderer = NeRFRenderer()
    render = torch.compile(renderer)
    opt = torch.optim.Adam(renderer.parameters(), lr=5e-4)
    c2w = np.eye(4, dtype=np.float32)
    c2w[2, 3] = 4.0
    rays_o, rays_d = get_rays(8, 8, focal=10.0, c2w=c2w)
    target = torch.rand(rays_o.shape[0], 3)
    for it in range(4):
        idx = torch.randperm(rays_o.shape[0])[:32]
        rgb, rgb0, depth, acc = render(rays_o[idx], rays_d[idx])
        loss = F.mse_loss(rgb, target[idx]) + F.mse_loss(rgb0, target[idx])
        psnr = -10.0 * math.log10(loss.item())
        opt.zero_grad()
        loss.backward()
        opt.step()
    return psnr


if __name__ == "__main__":
    print(main())
