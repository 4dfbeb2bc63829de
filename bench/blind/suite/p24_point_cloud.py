"""Point clouds: farthest point sampling, ball-query grouping and voxel downsampling."""
import torch


def farthest_point_sample(xyz, npoint):
    n = xyz.shape[0]
    centroids = torch.zeros(npoint, dtype=torch.long)
    dist = torch.full((n,), 1e10)
    farthest = torch.randint(0, n, (1,)).item()
    for i in range(npoint):
        centroids[i] = farthest
        d = ((xyz - xyz[farthest]) ** 2).sum(-1)
        dist = torch.minimum(dist, d)
        farthest = int(dist.argmax())
    return centroids


def ball_query(xyz, centers, radius, k):
    n = xyz.shape[0]
    d2 = torch.cdist(centers, xyz).pow(2)
    idx = torch.arange(n).expand(centers.shape[0], n).clone()
    idx[d2 > radius ** 2] = n
    idx = idx.sort(dim=-1).values[:, :k]
    first = idx[:, :1].expand(-1, k)
    idx = torch.where(idx == n, first, idx)
    return idx


def voxel_downsample(points, voxel):
    coords = torch.floor(points / voxel).long()
    uniq, inverse = torch.unique(coords, dim=0, return_inverse=True)
    sums = torch.zeros(uniq.shape[0], 3).index_add_(0, inverse, points)
    counts = torch.bincount(inverse).float().unsqueeze(-1)
    return sums / counts


def main():
    torch.manual_seed(0)
    fps = torch.compile(farthest_point_sample, backend="eager")
    fps(torch.rand(64, 3), 8)
    fps(torch.rand(64, 3), 16)

    bq = torch.compile(ball_query, backend="eager")
    bq(torch.rand(64, 3), torch.rand(8, 3), 0.3, 4)
    bq(torch.rand(64, 3), torch.rand(8, 3), 0.2, 4)

    vd = torch.compile(voxel_downsample, backend="eager")
    vd(torch.rand(100, 3), 0.25)
    vd(torch.rand(120, 3), 0.25)
