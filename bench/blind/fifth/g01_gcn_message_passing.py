"""Two-layer GCN for graph classification on mini-batches of small graphs.

Graphs are collated PyG-style: node features are concatenated, edge indices
are offset, and a ``batch`` vector maps every node to its graph.
"""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class GraphBatch:
    x: torch.Tensor
    edge_index: torch.Tensor
    batch: torch.Tensor


def add_self_loops(edge_index, num_nodes):
    loops = torch.arange(num_nodes, device=edge_index.device)
    loops = loops.unsqueeze(0).repeat(2, 1)
    return torch.cat([edge_index, loops], dim=1)


def gcn_norm(edge_index, num_nodes, dtype):
    row, col = edge_index
    deg = torch.zeros(num_nodes, dtype=dtype, device=edge_index.device)
    deg.index_add_(0, col, torch.ones(col.numel(), dtype=dtype, device=edge_index.device))
    deg_inv_sqrt = deg.pow(-0.5)
    deg_inv_sqrt[deg_inv_sqrt == float("inf")] = 0.0
    return deg_inv_sqrt[row] * deg_inv_sqrt[col]


class GCNConv(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lin = nn.Linear(in_channels, out_channels, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_channels))

    def forward(self, x, edge_index):
        num_nodes = x.size(0)
        edge_index = add_self_loops(edge_index, num_nodes)
        norm = gcn_norm(edge_index, num_nodes, x.dtype)
        x = self.lin(x)
        row, col = edge_index
        msg = x[row] * norm.unsqueeze(-1)
        out = torch.zeros_like(x)
        out.index_add_(0, col, msg)
        return out + self.bias


def global_mean_pool(x, batch):
    num_graphs = int(batch.max()) + 1
    sums = x.new_zeros(num_graphs, x.size(-1)).index_add_(0, batch, x)
    counts = torch.bincount(batch, minlength=num_graphs).clamp(min=1)
    return sums / counts.unsqueeze(-1).to(x.dtype)


class GCNClassifier(nn.Module):
    def __init__(self, in_dim, hidden, num_classes, dropout=0.1):
        super().__init__()
        self.conv1 = GCNConv(in_dim, hidden)
        self.conv2 = GCNConv(hidden, hidden)
        self.head = nn.Linear(hidden, num_classes)
        self.dropout = dropout

    def forward(self, data: GraphBatch):
        x = F.relu(self.conv1(data.x, data.edge_index))
        x = F.dropout(x, p=self.dropout, training=self.training)
        x = F.relu(self.conv2(x, data.edge_index))
        return self.head(global_mean_pool(x, data.batch))


def random_graph(num_nodes, num_edges, in_dim, generator):
    src = torch.randint(0, num_nodes, (num_edges,), generator=generator)
    dst = torch.randint(0, num_nodes, (num_edges,), generator=generator)
    return torch.randn(num_nodes, in_dim, generator=generator), torch.stack([src, dst])


def collate(graphs):
    xs, eis, batch = [], [], []
    offset = 0
    for i, (x, ei) in enumerate(graphs):
        xs.append(x)
        eis.append(ei + offset)
        batch.append(torch.full((x.size(0),), i, dtype=torch.long))
        offset += x.size(0)
    return GraphBatch(torch.cat(xs), torch.cat(eis, dim=1), torch.cat(batch))


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    model = GCNClassifier(in_dim=8, hidden=16, num_classes=3)
    model = torch.compile(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)

    for sizes in ([5, 7, 6], [9, 4], [3, 3, 8, 5]):
        graphs = [random_graph(n, 2 * n, 8, g) for n in sizes]
        data = collate(graphs)
        labels = torch.randint(0, 3, (len(sizes),), generator=g)
        logits = model(data)
        loss = F.cross_entropy(logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()

    model.eval()
    with torch.no_grad():
        data = collate([random_graph(6, 10, 8, g)])
        print("pred", model(data).argmax(-1).tolist())


if __name__ == "__main__":
    main()
