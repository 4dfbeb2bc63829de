"""Graph neural network: GCN message passing with degree normalisation, top-k pooling and edge filtering."""
import math

import torch
import torch.nn as nn


class GCNLayer(nn.Module):
    def __init__(self, dim_in, dim_out):
        super().__init__()
        self.lin = nn.Linear(dim_in, dim_out)

    def forward(self, x, edge_index):
        src, dst = edge_index
        deg = torch.bincount(dst, minlength=x.shape[0]).float()
        norm = deg.clamp(min=1).rsqrt()
        msg = x[src] * norm[src].unsqueeze(-1)
        out = torch.zeros_like(x).index_add_(0, dst, msg)
        return torch.relu(self.lin(out * norm.unsqueeze(-1)))


class TopKPool(nn.Module):
    def __init__(self, dim, ratio=0.5):
        super().__init__()
        self.score = nn.Linear(dim, 1)
        self.ratio = ratio

    def forward(self, x, edge_index):
        s = self.score(x).squeeze(-1).tanh()
        k = int(math.ceil(self.ratio * x.shape[0]))
        perm = s.topk(k).indices
        keep = torch.isin(edge_index[0], perm) & torch.isin(edge_index[1], perm)
        edge_index = edge_index[:, keep]
        remap = torch.full((x.shape[0],), -1, dtype=torch.long)
        remap[perm] = torch.arange(k)
        return x[perm] * s[perm].unsqueeze(-1), remap[edge_index]


class GraphClassifier(nn.Module):
    def __init__(self, dim=8, n_classes=3):
        super().__init__()
        self.conv1 = GCNLayer(dim, dim)
        self.pool = TopKPool(dim)
        self.conv2 = GCNLayer(dim, dim)
        self.head = nn.Linear(dim, n_classes)

    def forward(self, x, edge_index):
        x = self.conv1(x, edge_index)
        x, edge_index = self.pool(x, edge_index)
        x = self.conv2(x, edge_index)
        return self.head(x.mean(0))


def remove_self_loops(edge_index):
    mask = edge_index[0] != edge_index[1]
    return edge_index[:, mask]


def main():
    torch.manual_seed(0)
    model = GraphClassifier()
    model.compile(backend="eager")
    model(torch.randn(10, 8), torch.randint(0, 10, (2, 30)))
    model(torch.randn(12, 8), torch.randint(0, 12, (2, 40)))

    rsl = torch.compile(remove_self_loops, backend="eager")
    rsl(torch.randint(0, 5, (2, 20)))
    rsl(torch.randint(0, 5, (2, 20)))
