"""Message passing on graphs given as edge lists (scatter-style aggregation)."""
import torch
import torch.nn as nn


def scatter_mean(src, index, num_nodes: int):
    out = src.new_zeros(num_nodes, src.shape[-1])
    out.index_add_(0, index, src)
    count = torch.bincount(index, minlength=num_nodes).clamp(min=1)  # expect: DYN401
    return out / count[:, None]


def degree(index, num_nodes: int):
    ones = torch.ones_like(index, dtype=torch.float32)
    return torch.zeros(num_nodes).scatter_add_(0, index, ones)  # ok


class GraphConv(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.lin = nn.Linear(dim, dim)
        self.root = nn.Linear(dim, dim)

    def forward(self, x, edge_index):
        src, dst = edge_index
        num_nodes = x.shape[0]
        deg = degree(dst, num_nodes)
        msg = self.lin(x)[src] / deg[dst].clamp(min=1)[:, None]  # ok
        agg = torch.zeros_like(x).index_add_(0, dst, msg)
        return agg + self.root(x)


class MeanConv(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.lin = nn.Linear(dim, dim)

    def forward(self, x, edge_index):
        src, dst = edge_index
        return scatter_mean(self.lin(x)[src], dst, x.shape[0])


class InferNodes(nn.Module):
    """Infers the node count from the edge list, as many loaders do."""

    def __init__(self, dim: int):
        super().__init__()
        self.lin = nn.Linear(dim, dim)

    def forward(self, x_all, edge_index):
        num_nodes = edge_index.max() + 1
        x = x_all[:num_nodes]  # expect: DYN207
        return self.lin(x)


class DropEdges(nn.Module):
    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, edge_index):
        keep = torch.rand(edge_index.shape[1]) >= self.p
        return edge_index[:, keep]  # expect: DYN402


def __dynlint_calls__():
    torch.manual_seed(0)
    x = torch.randn(5, 4)
    edge_index = torch.tensor([[0, 1, 2, 3, 4, 0], [1, 2, 3, 4, 0, 2]])
    torch.compile(GraphConv(4))(x, edge_index)
    torch.compile(MeanConv(4))(x, edge_index)
    torch.compile(InferNodes(4))(torch.randn(8, 4), edge_index)
    torch.compile(DropEdges())(edge_index)
