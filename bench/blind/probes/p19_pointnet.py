"""PointNet++ set-abstraction: farthest point sampling, ball query, voxel downsampling via numpy."""
import numpy as np
import torch
import torch.nn as nn


def farthest_point_sample(xyz, npoint):
    B, N, _ = xyz.shape
    centroids = torch.zeros(B, npoint, dtype=torch.long)
    distance = torch.full((B, N), 1e10)
    farthest = torch.zeros(B, dtype=torch.long)
    batch = torch.arange(B)
    for i in range(npoint):
        centroids[:, i] = farthest
        centroid = xyz[batch, farthest].view(B, 1, 3)
        dist = ((xyz - centroid) ** 2).sum(-1)
        distance = torch.minimum(distance, dist)
        farthest = distance.max(-1)[1]
    return centroids


def ball_query(radius, nsample, xyz, new_xyz):
    B, N, _ = xyz.shape
    S = new_xyz.shape[1]
    group_idx = torch.arange(N).view(1, 1, N).repeat(B, S, 1)
    sqrdists = torch.cdist(new_xyz, xyz) ** 2
    group_idx[sqrdists > radius ** 2] = N
    group_idx = group_idx.sort(dim=-1)[0][:, :, :nsample]
    first = group_idx[:, :, :1].expand(-1, -1, nsample)
    mask = group_idx == N
    group_idx[mask] = first[mask]
    return group_idx


def voxel_downsample(points, voxel_size):
    coords = np.floor(points.numpy() / voxel_size).astype(np.int64)
    _, keep = np.unique(coords, axis=0, return_index=True)
    return points[torch.from_numpy(np.sort(keep))]


class SetAbstraction(nn.Module):
    def __init__(self, npoint, radius, nsample, cin, cout):
        super().__init__()
        self.npoint, self.radius, self.nsample = npoint, radius, nsample
        self.mlp = nn.Sequential(nn.Linear(cin + 3, cout), nn.ReLU(), nn.Linear(cout, cout))

    def forward(self, xyz, feats):
        B = xyz.shape[0]
        idx = farthest_point_sample(xyz, self.npoint)
        batch = torch.arange(B)[:, None]
        new_xyz = xyz[batch, idx]
        g = ball_query(self.radius, self.nsample, xyz, new_xyz)
        bi = torch.arange(B)[:, None, None]
        grouped = torch.cat([xyz[bi, g] - new_xyz[:, :, None], feats[bi, g]], dim=-1)
        return new_xyz, self.mlp(grouped).max(dim=2)[0]


class PointNet2(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.sa1 = SetAbstraction(16, 0.4, 8, 3, 16)
        self.sa2 = SetAbstraction(4, 0.8, 8, 16, 32)
        self.head = nn.Linear(32, classes)

    def forward(self, xyz):
        xyz, f = self.sa1(xyz, xyz)
        xyz, f = self.sa2(xyz, f)
        return self.head(f.max(dim=1)[0])


@torch.compile
def preprocess(cloud, voxel_size=0.1):
    cloud = cloud - cloud.mean(0)
    cloud = cloud / cloud.norm(dim=-1).max()
    return voxel_downsample(cloud, voxel_size)


def main():
    torch.manual_seed(0)
    model = torch.compile(PointNet2())
    clouds = [preprocess(torch.randn(80, 3))[:48] for _ in range(2)]
    logits = model(torch.stack(clouds))
    logits = model(torch.stack(clouds[::-1]))
    return logits.shape


if __name__ == "__main__":
    print(main())
