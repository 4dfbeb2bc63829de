"""Sparse GCN over an edge list (PyG-style): self loops, symmetric normalisation, scatter-add aggregation, graph readout."""
import torch
import torch.nn as nn


def add_self_loops(edge_index, num_nodes):
    loops = torch.arange(num_nodes).repeat(2, 1)
    return torch.cat([edge_index, loops], dim=1)


def gcn_norm(edge_index, num_nodes):
    row, col = edge_index
    deg = torch.zeros(num_nodes).index_add_(0, col, torch.ones(col.numel()))
    dinv = deg.pow(-0.5)
    dinv[dinv == float("inf")] = 0
    return dinv[row] * dinv[col]


class GCNConv(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_dim))

    def forward(self, x, edge_index):
        num_nodes = x.size(0)
        edge_index = add_self_loops(edge_index, num_nodes)
        w = gcn_norm(edge_index, num_nodes)
        h = self.lin(x)
        msg = h[edge_index[0]] * w[:, None]
        out = torch.zeros_like(h).index_add_(0, edge_index[1], msg)
        return out + self.bias


class GCN(nn.Module):
    def __init__(self, in_dim, hidden, n_classes):
        super().__init__()
        self.conv1 = GCNConv(in_dim, hidden)
        self.conv2 = GCNConv(hidden, hidden)
        self.head = nn.Linear(hidden, n_classes)

    def forward(self, x, edge_index, batch):
        h = torch.relu(self.conv1(x, edge_index))
        h = torch.relu(self.conv2(h, edge_index))
        num_graphs = int(batch.max()) + 1
        pooled = torch.zeros(num_graphs, h.size(1)).index_add_(0, batch, h)
        counts = torch.bincount(batch, minlength=num_graphs).clamp(min=1)
        return self.head(pooled / counts[:, None])


def random_batch(sizes, in_dim):
    xs, edges, batch, offset = [], [], [], 0
    for g, n in enumerate(sizes):
        xs.append(torch.randn(n, in_dim))
        src = torch.randint(0, n, (2 * n,))
        dst = torch.randint(0, n, (2 * n,))
        edges.append(torch.stack([src, dst]) + offset)
        batch.append(torch.full((n,), g))
        offset += n
    return torch.cat(xs), torch.cat(edges, dim=1), torch.cat(batch)


def main():
    torch.manual_seed(0)
    model = GCN(8, 16, 3)
    model = torch.compile(model, backend="eager")
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for sizes in ((5, 7, 4), (6, 6), (9, 3, 5, 4)):
        x, ei, b = random_batch(sizes, 8)
        y = torch.randint(0, 3, (len(sizes),))
        loss = nn.functional.cross_entropy(model(x, ei, b), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
