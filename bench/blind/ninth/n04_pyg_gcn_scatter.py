"""PyG-style GCNConv / MessagePassing with scatter-add aggregation, trained on small random graphs."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


def maybe_num_nodes(edge_index, num_nodes=None):
    if num_nodes is not None:
        return num_nodes
    return int(edge_index.max()) + 1 if edge_index.numel() > 0 else 0


def scatter_add(src, index, dim=0, dim_size=None):
    if dim_size is None:
        dim_size = maybe_num_nodes(index)
    size = list(src.shape)
    size[dim] = dim_size
    out = src.new_zeros(size)
    return out.index_add_(dim, index, src)


def add_remaining_self_loops(edge_index, edge_weight, fill_value, num_nodes):
    mask = edge_index[0] != edge_index[1]
    loop_index = torch.arange(num_nodes, device=edge_index.device).unsqueeze(0).repeat(2, 1)
    edge_index = torch.cat([edge_index[:, mask], loop_index], dim=1)
    loop_weight = edge_weight.new_full((num_nodes,), fill_value)
    edge_weight = torch.cat([edge_weight[mask], loop_weight], dim=0)
    return edge_index, edge_weight


def gcn_norm(edge_index, edge_weight=None, num_nodes=None, improved=False, add_self_loops=True):
    fill_value = 2.0 if improved else 1.0
    num_nodes = maybe_num_nodes(edge_index, num_nodes)
    if edge_weight is None:
        edge_weight = torch.ones(edge_index.size(1), device=edge_index.device)
    if add_self_loops:
        edge_index, edge_weight = add_remaining_self_loops(edge_index, edge_weight, fill_value, num_nodes)
    row, col = edge_index[0], edge_index[1]
    deg = scatter_add(edge_weight, col, dim=0, dim_size=num_nodes)
    deg_inv_sqrt = deg.pow(-0.5)
    deg_inv_sqrt.masked_fill_(deg_inv_sqrt == float("inf"), 0)
    return edge_index, deg_inv_sqrt[row] * edge_weight * deg_inv_sqrt[col]


class MessagePassing(nn.Module):
    def __init__(self, aggr="add"):
        super().__init__()
        self.aggr = aggr

    def propagate(self, edge_index, x, edge_weight=None, size=None):
        j, i = edge_index[0], edge_index[1]
        msg = self.message(x[j], edge_weight)
        dim_size = size if size is not None else x.size(0)
        out = scatter_add(msg, i, dim=0, dim_size=dim_size)
        if self.aggr == "mean":
            cnt = scatter_add(torch.ones_like(i, dtype=x.dtype), i, dim=0, dim_size=dim_size).clamp(min=1)
            out = out / cnt.unsqueeze(-1)
        return out

    def message(self, x_j, edge_weight):
        return x_j if edge_weight is None else edge_weight.view(-1, 1) * x_j


class GCNConv(MessagePassing):
    def __init__(self, in_channels, out_channels, improved=False, bias=True):
        super().__init__(aggr="add")
        self.improved = improved
        self.lin = nn.Linear(in_channels, out_channels, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_channels)) if bias else None

    def forward(self, x, edge_index, edge_weight=None):
        edge_index, edge_weight = gcn_norm(edge_index, edge_weight, None, self.improved)
        x = self.lin(x)
        out = self.propagate(edge_index, x, edge_weight)
        if self.bias is not None:
            out = out + self.bias
        return out


class GCN(nn.Module):
    def __init__(self, in_channels, hidden, num_classes, dropout=0.5):
        super().__init__()
        self.conv1 = GCNConv(in_channels, hidden)
        self.conv2 = GCNConv(hidden, num_classes)
        self.dropout = dropout

    def forward(self, x, edge_index):
        x = F.dropout(x, p=self.dropout, training=self.training)
        x = F.relu(self.conv1(x, edge_index))
        x = F.dropout(x, p=self.dropout, training=self.training)
        return self.conv2(x, edge_index)


def random_graph(num_nodes, num_edges, g):
    src = torch.randint(0, num_nodes, (num_edges,), generator=g)
    dst = torch.randint(0, num_nodes, (num_edges,), generator=g)
    edge_index = torch.stack([torch.cat([src, dst]), torch.cat([dst, src])])
    edge_index[:, 0] = num_nodes - 1  # make sure the last node appears
    return edge_index


def main():
    torch.manual_seed(0)
    random.seed(0)
    g = torch.Generator().manual_seed(0)
    num_nodes, feats, classes = 30, 8, 3
    x = torch.randn(num_nodes, feats, generator=g)
    y = torch.randint(0, classes, (num_nodes,), generator=g)
    edge_index = random_graph(num_nodes, 60, g)
    train_mask = torch.rand(num_nodes, generator=g) < 0.6
    model = GCN(feats, 16, classes)
    compiled = torch.compile(model)
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    for epoch in range(6):
        model.train()
        opt.zero_grad()
        out = compiled(x, edge_index)
        loss = F.cross_entropy(out[train_mask], y[train_mask])
        loss.backward()
        opt.step()
    return loss.item()


if __name__ == "__main__":
    print(main())
