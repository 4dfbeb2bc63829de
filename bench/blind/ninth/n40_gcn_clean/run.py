import random

import torch
import torch.nn as nn
import torch.nn.functional as F

from .graph_utils import normalized_edges, random_graph
from .layers import GCNLayer


class GCN(nn.Module):
    def __init__(self, d_in, hidden, n_classes):
        super().__init__()
        self.l1 = GCNLayer(d_in, hidden)
        self.l2 = GCNLayer(hidden, n_classes, activation=False)

    def forward(self, x, edge_index, edge_weight):
        return self.l2(self.l1(x, edge_index, edge_weight), edge_index, edge_weight)


def main():
    torch.manual_seed(0)
    random.seed(0)
    g = torch.Generator().manual_seed(0)
    n, d, c = 40, 8, 4
    x = torch.randn(n, d, generator=g)
    y = torch.randint(0, c, (n,), generator=g)
    edge_index, edge_weight = normalized_edges(random_graph(n, 80, g), n)
    train_idx = torch.arange(0, 30)
    model = GCN(d, 16, c)
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    model.train()
    for epoch in range(6):
        out = model(x, edge_index, edge_weight)
        loss = F.cross_entropy(out[train_idx], y[train_idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()
