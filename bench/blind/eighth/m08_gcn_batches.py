"""Graph classification with a hand-written GCN over mini-batches of variable-sized graphs."""
from __future__ import annotations

from typing import List, Tuple

import torch
import torch.nn as nn


def random_graph(n_nodes: int, n_feat: int, p: float = 0.3) -> Tuple[torch.Tensor, torch.Tensor]:
    x = torch.randn(n_nodes, n_feat)
    adj = torch.rand(n_nodes, n_nodes) < p
    adj = adj | adj.T
    src, dst = adj.nonzero(as_tuple=True)
    return x, torch.stack([src, dst])


def collate(graphs: List[Tuple[torch.Tensor, torch.Tensor]]):
    xs, edges, batch, offset = [], [], [], 0
    for gi, (x, e) in enumerate(graphs):
        xs.append(x)
        edges.append(e + offset)
        batch.append(torch.full((x.shape[0],), gi, dtype=torch.long))
        offset += x.shape[0]
    return torch.cat(xs), torch.cat(edges, dim=1), torch.cat(batch), len(graphs)


class GCNLayer(nn.Module):
    def __init__(self, d_in: int, d_out: int) -> None:
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        n = x.shape[0]
        loops = torch.arange(n)
        src = torch.cat([edge_index[0], loops])
        dst = torch.cat([edge_index[1], loops])
        deg = torch.zeros(n).index_add_(0, dst, torch.ones_like(dst, dtype=torch.float))
        norm = deg[src].rsqrt() * deg[dst].rsqrt()
        h = self.lin(x)
        out = torch.zeros_like(h).index_add_(0, dst, h[src] * norm[:, None])
        return torch.relu(out)


class GraphClassifier(nn.Module):
    def __init__(self, d_in: int = 8, hidden: int = 16, n_cls: int = 3) -> None:
        super().__init__()
        self.convs = nn.ModuleList([GCNLayer(d_in, hidden), GCNLayer(hidden, hidden)])
        self.head = nn.Linear(hidden, n_cls)

    def forward(self, x, edge_index, batch, num_graphs: int):
        for conv in self.convs:
            x = conv(x, edge_index)
        pooled = torch.zeros(num_graphs, x.shape[1]).index_add_(0, batch, x)
        counts = torch.bincount(batch, minlength=num_graphs).clamp(min=1)
        return self.head(pooled / counts[:, None])


def main() -> None:
    torch.manual_seed(0)
    model = GraphClassifier()
    cmodel = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    batch_sizes = [4, 4, 3, 4, 2]
    for step, bs in enumerate(batch_sizes):
        graphs = [random_graph(int(torch.randint(4, 10, ())), 8) for _ in range(bs)]
        x, ei, batch, ng = collate(graphs)
        y = torch.randint(0, 3, (ng,))
        loss = nn.functional.cross_entropy(cmodel(x, ei, batch, ng), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, ng, round(loss.item(), 4))


if __name__ == "__main__":
    main()
