"""PyTorch3D-like heterogeneous point clouds: list -> padded, kNN, chamfer loss with optional lengths."""
import torch
import torch.nn as nn


class Pointclouds:
    def __init__(self, points):
        self._points_list = points
        self._N = len(points)
        self._num_points_per_cloud = torch.tensor([len(p) for p in points], dtype=torch.int64)
        self._points_padded = None

    def num_points_per_cloud(self):
        return self._num_points_per_cloud

    def points_padded(self):
        if self._points_padded is None:
            max_p = int(self._num_points_per_cloud.max())
            padded = torch.zeros(self._N, max_p, 3)
            for i, p in enumerate(self._points_list):
                padded[i, : p.shape[0]] = p
            self._points_padded = padded
        return self._points_padded


def knn_points(p1, p2, lengths1, lengths2, K=1):
    dists = torch.cdist(p1, p2) ** 2
    if lengths2 is not None:
        invalid = torch.arange(p2.shape[1])[None, None, :] >= lengths2[:, None, None]
        dists = dists.masked_fill(invalid, float("inf"))
    d, idx = dists.topk(K, dim=-1, largest=False)
    return d, idx


def chamfer_distance(x, y, x_lengths=None, y_lengths=None, batch_reduction="mean"):
    N, P1 = x.shape[:2]
    P2 = y.shape[1]
    if x_lengths is None:
        x_lengths = torch.full((N,), P1, dtype=torch.int64)
    if y_lengths is None:
        y_lengths = torch.full((N,), P2, dtype=torch.int64)
    x_mask = torch.arange(P1)[None] >= x_lengths[:, None]
    y_mask = torch.arange(P2)[None] >= y_lengths[:, None]
    cham_x = knn_points(x, y, x_lengths, y_lengths)[0][..., 0].masked_fill(x_mask, 0.0)
    cham_y = knn_points(y, x, y_lengths, x_lengths)[0][..., 0].masked_fill(y_mask, 0.0)
    cham_x = cham_x.sum(1) / x_lengths
    cham_y = cham_y.sum(1) / y_lengths
    if batch_reduction == "mean":
        return (cham_x + cham_y).mean()
    if batch_reduction == "sum":
        return (cham_x + cham_y).sum()
    return cham_x + cham_y


class PointDeformer(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(3, hidden), nn.ReLU(), nn.Linear(hidden, 3))

    def forward(self, src: Pointclouds):
        pts = src.points_padded()
        offsets = self.mlp(pts)
        valid = torch.arange(pts.shape[1])[None] < src.num_points_per_cloud()[:, None]
        return pts + offsets * valid[..., None], src.num_points_per_cloud()


def fit_step(model, src, tgt, reduction):
    pred, pred_len = model(src)
    tgt_pts = tgt.points_padded()
    loss = chamfer_distance(pred, tgt_pts, pred_len, tgt.num_points_per_cloud(), batch_reduction=reduction)
    return loss


def main():
    torch.manual_seed(0)
    model = PointDeformer()
    step = torch.compile(fit_step)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sizes = [20, 14, 17]
    src_points = [torch.randn(n, 3) for n in sizes]
    tgt_points = [torch.randn(n + 3, 3) * 1.5 for n in sizes]
    for _ in range(3):
        src = Pointclouds([p + 0.01 * torch.randn_like(p) for p in src_points])
        tgt = Pointclouds(tgt_points)
        loss = step(model, src, tgt, "mean")
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
