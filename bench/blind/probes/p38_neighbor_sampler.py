"""GraphSAGE with on-the-fly neighbour sampling written in Python over adjacency lists."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


class NeighborSampler:
    def __init__(self, edge_index, num_nodes, fanout=3):
        self.adj = [[] for _ in range(num_nodes)]
        for s, d in edge_index.t().tolist():
            self.adj[d].append(s)
        self.fanout = fanout

    def sample(self, seeds):
        rows, cols = [], []
        for i, node in enumerate(seeds.tolist()):
            neigh = self.adj[node]
            chosen = random.sample(neigh, min(self.fanout, len(neigh))) if neigh else [node]
            rows.extend([i] * len(chosen))
            cols.extend(chosen)
        return torch.tensor(rows), torch.tensor(cols)


class SAGEConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.lin_self = nn.Linear(cin, cout)
        self.lin_neigh = nn.Linear(cin, cout)

    def forward(self, x_target, x_all, rows, cols):
        agg = torch.zeros(x_target.size(0), x_all.size(1)).index_add_(0, rows, x_all[cols])
        deg = torch.bincount(rows, minlength=x_target.size(0)).clamp(min=1)
        return self.lin_self(x_target) + self.lin_neigh(agg / deg[:, None])


class SAGE(nn.Module):
    def __init__(self, sampler, cin=8, hidden=16, classes=3):
        super().__init__()
        self.sampler = sampler
        self.conv1 = SAGEConv(cin, hidden)
        self.conv2 = SAGEConv(hidden, classes)

    def forward(self, x, seeds):
        rows, cols = self.sampler.sample(seeds)
        hop1 = torch.unique(cols)
        r1, c1 = self.sampler.sample(hop1)
        h1 = F.relu(self.conv1(x[hop1], x, r1, c1))
        h_all = torch.zeros(x.size(0), h1.size(1)).index_copy(0, hop1, h1)
        return self.conv2(h_all[seeds], h_all, rows, cols)


def main():
    torch.manual_seed(0)
    random.seed(0)
    n = 40
    edge_index = torch.randint(0, n, (2, 160))
    model = SAGE(NeighborSampler(edge_index, n))
    fwd = torch.compile(model)
    x = torch.randn(n, 8)
    y = torch.randint(0, 3, (n,))
    for _ in range(2):
        seeds = torch.randperm(n)[:8]
        loss = F.cross_entropy(fwd(x, seeds), y[seeds])
        loss.backward()
    return loss.item()


if __name__ == "__main__":
    print(main())
