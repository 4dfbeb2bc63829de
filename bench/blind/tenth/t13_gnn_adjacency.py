"""GraphSAGE-style message passing over Python adjacency lists (dict node -> neighbour list)."""
from collections import defaultdict

import torch
import torch.nn as nn


def build_adjacency(edges, num_nodes, add_self_loops=True):
    adj = defaultdict(list)
    for u, v in edges:
        adj[u].append(v)
        adj[v].append(u)
    if add_self_loops:
        for n in range(num_nodes):
            adj[n].append(n)
    return {n: sorted(set(adj[n])) for n in range(num_nodes)}


class SAGEConv(nn.Module):
    def __init__(self, in_dim, out_dim, aggr="mean"):
        super().__init__()
        self.lin_self = nn.Linear(in_dim, out_dim)
        self.lin_neigh = nn.Linear(in_dim, out_dim, bias=False)
        self.aggr = aggr

    def aggregate(self, x, adj):
        rows = []
        for node in range(x.shape[0]):
            nbrs = adj[node]
            msgs = x[nbrs]
            if self.aggr == "mean":
                rows.append(msgs.sum(0) / len(nbrs))
            elif self.aggr == "max":
                rows.append(msgs.max(0).values)
            else:
                rows.append(msgs.sum(0))
        return torch.stack(rows)

    def forward(self, x, adj):
        return self.lin_self(x) + self.lin_neigh(self.aggregate(x, adj))


class GraphSAGE(nn.Module):
    def __init__(self, in_dim=8, hidden=16, out_dim=4, num_layers=2):
        super().__init__()
        dims = [in_dim] + [hidden] * (num_layers - 1) + [out_dim]
        self.convs = nn.ModuleList([SAGEConv(a, b) for a, b in zip(dims[:-1], dims[1:])])

    def forward(self, x, adj):
        for i, conv in enumerate(self.convs):
            x = conv(x, adj)
            if i < len(self.convs) - 1:
                x = torch.relu(x)
        return x


def main():
    torch.manual_seed(0)
    model = GraphSAGE()
    compiled = torch.compile(model)
    graphs = [
        ([(0, 1), (1, 2), (2, 3), (3, 4)], 5),
        ([(0, 1), (1, 2), (2, 3), (3, 4)], 5),
        ([(0, 2), (1, 2), (2, 3), (3, 4), (4, 0)], 5),
        ([(0, 1), (0, 2), (0, 3), (4, 5)], 6),
    ]
    for edges, n in graphs:
        adj = build_adjacency(edges, n)
        out = compiled(torch.randn(n, 8), adj)
        assert out.shape == (n, 4)


if __name__ == "__main__":
    main()
