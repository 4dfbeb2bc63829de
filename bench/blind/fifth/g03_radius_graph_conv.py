"""Point-cloud segmentation with radius graphs and an EdgeConv-style layer."""
import torch
import torch.nn as nn


def radius_graph(pos, r, batch=None, loop=False, max_num_neighbors=32):
    if batch is None:
        batch = pos.new_zeros(pos.size(0), dtype=torch.long)
    dist = torch.cdist(pos, pos)
    same_graph = batch.unsqueeze(0) == batch.unsqueeze(1)
    adj = (dist <= r) & same_graph
    if not loop:
        adj.fill_diagonal_(False)
    dst, src = adj.nonzero(as_tuple=True)
    if max_num_neighbors is not None:
        counts = torch.bincount(dst, minlength=pos.size(0))
        if counts.max() > max_num_neighbors:
            rank = torch.cumsum(torch.ones_like(dst), 0) - 1
            first = torch.cumsum(counts, 0) - counts
            keep = (rank - first[dst]) < max_num_neighbors
            src, dst = src[keep], dst[keep]
    return torch.stack([src, dst], dim=0)


def scatter_max(src, index, dim_size):
    out = src.new_full((dim_size, src.size(-1)), float("-inf"))
    out = out.scatter_reduce(0, index.unsqueeze(-1).expand_as(src), src, reduce="amax", include_self=True)
    return torch.where(torch.isinf(out), torch.zeros_like(out), out)


class EdgeConv(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.nn = nn.Sequential(
            nn.Linear(2 * in_channels, out_channels),
            nn.ReLU(),
            nn.Linear(out_channels, out_channels),
        )

    def forward(self, x, edge_index):
        src, dst = edge_index
        x_i, x_j = x[dst], x[src]
        msg = self.nn(torch.cat([x_i, x_j - x_i], dim=-1))
        return scatter_max(msg, dst, x.size(0))


class PointSegNet(nn.Module):
    def __init__(self, in_channels=3, hidden=32, num_classes=5, radius=0.5):
        super().__init__()
        self.radius = radius
        self.conv1 = EdgeConv(in_channels + 3, hidden)
        self.conv2 = EdgeConv(hidden, hidden)
        self.classifier = nn.Linear(2 * hidden, num_classes)

    def forward(self, pos, feats, batch):
        edge_index = radius_graph(pos, self.radius, batch)
        h1 = self.conv1(torch.cat([pos, feats], dim=-1), edge_index)
        h2 = self.conv2(h1, edge_index)
        return self.classifier(torch.cat([h1, h2], dim=-1))


@torch.no_grad()
def segment_scenes(model, scenes):
    preds = []
    for pos, feats in scenes:
        batch = torch.zeros(pos.size(0), dtype=torch.long)
        preds.append(model(pos, feats, batch).argmax(dim=-1))
    return preds


def main():
    torch.manual_seed(0)
    net = PointSegNet()
    compiled = torch.compile(net)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)

    for num_points in (40, 56):
        pos = torch.rand(num_points, 3)
        feats = torch.randn(num_points, 3)
        batch = torch.arange(2).repeat_interleave(num_points // 2)
        target = torch.randint(0, 5, (num_points,))
        loss = nn.functional.cross_entropy(compiled(pos, feats, batch), target)
        opt.zero_grad()
        loss.backward()
        opt.step()

    net.radius = 0.3
    scenes = [(torch.rand(n, 3), torch.randn(n, 3)) for n in (30, 45)]
    print([p.shape for p in segment_scenes(compiled, scenes)])


if __name__ == "__main__":
    main()
