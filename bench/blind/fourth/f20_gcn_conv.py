from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


def maybe_num_nodes(edge_index: Tensor, num_nodes: Optional[int] = None) -> int:
    if num_nodes is not None:
        return num_nodes
    return int(edge_index.max()) + 1 if edge_index.numel() > 0 else 0


def scatter_add(src: Tensor, index: Tensor, dim: int = 0, dim_size: Optional[int] = None) -> Tensor:
    if dim_size is None:
        dim_size = int(index.max()) + 1 if index.numel() > 0 else 0
    size = list(src.size())
    size[dim] = dim_size
    out = src.new_zeros(size)
    return out.index_add_(dim, index, src)


def add_remaining_self_loops(edge_index: Tensor, edge_weight: Optional[Tensor] = None, fill_value: float = 1.0,
                             num_nodes: Optional[int] = None) -> Tuple[Tensor, Optional[Tensor]]:
    N = maybe_num_nodes(edge_index, num_nodes)
    mask = edge_index[0] != edge_index[1]
    loop_index = torch.arange(0, N, dtype=torch.long, device=edge_index.device)
    loop_index = loop_index.unsqueeze(0).repeat(2, 1)
    if edge_weight is not None:
        loop_weight = edge_weight.new_full((N,), fill_value)
        edge_weight = torch.cat([edge_weight[mask], loop_weight], dim=0)
    edge_index = torch.cat([edge_index[:, mask], loop_index], dim=1)
    return edge_index, edge_weight


def gcn_norm(edge_index, edge_weight=None, num_nodes=None, improved=False, add_self_loops=True, dtype=None):
    fill_value = 2.0 if improved else 1.0
    num_nodes = maybe_num_nodes(edge_index, num_nodes)
    if edge_weight is None:
        edge_weight = torch.ones((edge_index.size(1),), dtype=dtype, device=edge_index.device)
    if add_self_loops:
        edge_index, edge_weight = add_remaining_self_loops(edge_index, edge_weight, fill_value, num_nodes)
    row, col = edge_index[0], edge_index[1]
    deg = scatter_add(edge_weight, col, dim=0, dim_size=num_nodes)
    deg_inv_sqrt = deg.pow_(-0.5)
    deg_inv_sqrt.masked_fill_(deg_inv_sqrt == float("inf"), 0)
    return edge_index, deg_inv_sqrt[row] * edge_weight * deg_inv_sqrt[col]


class MessagePassing(nn.Module):
    def __init__(self, aggr: str = "add", node_dim: int = -2):
        super().__init__()
        self.aggr = aggr
        self.node_dim = node_dim

    def propagate(self, edge_index: Tensor, size=None, **kwargs):
        x = kwargs["x"]
        j, i = edge_index[0], edge_index[1]
        x_j = x.index_select(self.node_dim, j)
        msg = self.message(x_j, **{k: v for k, v in kwargs.items() if k != "x"})
        return self.aggregate(msg, i, dim_size=x.size(self.node_dim))

    def message(self, x_j: Tensor, **kwargs) -> Tensor:
        return x_j

    def aggregate(self, inputs: Tensor, index: Tensor, dim_size: Optional[int] = None) -> Tensor:
        out = scatter_add(inputs, index, dim=0, dim_size=dim_size)
        if self.aggr == "mean":
            count = scatter_add(torch.ones_like(index, dtype=inputs.dtype), index, dim=0, dim_size=dim_size)
            out = out / count.clamp(min=1).unsqueeze(-1)
        return out


class GCNConv(MessagePassing):
    def __init__(self, in_channels: int, out_channels: int, improved: bool = False, cached: bool = False,
                 add_self_loops: bool = True, normalize: bool = True, bias: bool = True):
        super().__init__(aggr="add")
        self.improved = improved
        self.cached = cached
        self.add_self_loops = add_self_loops
        self.normalize = normalize
        self._cached_edge_index = None
        self.lin = nn.Linear(in_channels, out_channels, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_channels)) if bias else None

    def reset_cache(self):
        self._cached_edge_index = None

    def forward(self, x: Tensor, edge_index: Tensor, edge_weight: Optional[Tensor] = None) -> Tensor:
        if self.normalize:
            cache = self._cached_edge_index
            if cache is None:
                edge_index, edge_weight = gcn_norm(edge_index, edge_weight, x.size(self.node_dim), self.improved,
                                                   self.add_self_loops, dtype=x.dtype)
                if self.cached:
                    self._cached_edge_index = (edge_index, edge_weight)
            else:
                edge_index, edge_weight = cache[0], cache[1]
        x = self.lin(x)
        out = self.propagate(edge_index, x=x, edge_weight=edge_weight)
        if self.bias is not None:
            out = out + self.bias
        return out

    def message(self, x_j: Tensor, edge_weight: Optional[Tensor] = None) -> Tensor:
        return x_j if edge_weight is None else edge_weight.view(-1, 1) * x_j


def global_mean_pool(x: Tensor, batch: Optional[Tensor], size: Optional[int] = None) -> Tensor:
    if batch is None:
        return x.mean(dim=0, keepdim=True)
    size = int(batch.max().item() + 1) if size is None else size
    out = scatter_add(x, batch, dim=0, dim_size=size)
    count = scatter_add(torch.ones_like(batch, dtype=x.dtype), batch, dim=0, dim_size=size)
    return out / count.clamp(min=1).unsqueeze(-1)


class GCN(nn.Module):
    def __init__(self, in_channels, hidden_channels, num_classes, dropout=0.5):
        super().__init__()
        self.conv1 = GCNConv(in_channels, hidden_channels, cached=True)
        self.conv2 = GCNConv(hidden_channels, hidden_channels, cached=True)
        self.head = nn.Linear(hidden_channels, num_classes)
        self.dropout = dropout

    def forward(self, x, edge_index, batch=None):
        x = F.dropout(x, p=self.dropout, training=self.training)
        x = self.conv1(x, edge_index).relu()
        x = F.dropout(x, p=self.dropout, training=self.training)
        x = self.conv2(x, edge_index).relu()
        return self.head(global_mean_pool(x, batch))


def random_graph(num_nodes, num_edges):
    src = torch.randint(0, num_nodes, (num_edges,))
    dst = torch.randint(0, num_nodes, (num_edges,))
    return torch.stack([torch.cat([src, dst]), torch.cat([dst, src])])


def main():
    torch.manual_seed(0)
    model = GCN(8, 16, 3)
    model.compile()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    x, edge_index = torch.randn(20, 8), random_graph(20, 40)
    batch = torch.cat([torch.zeros(10, dtype=torch.long), torch.ones(10, dtype=torch.long)])
    y = torch.tensor([0, 2])
    model.train()
    for _ in range(3):
        loss = F.cross_entropy(model(x, edge_index, batch), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss


if __name__ == "__main__":
    main()
