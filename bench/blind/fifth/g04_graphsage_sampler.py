"""Mini-batch GraphSAGE training with a uniform neighbour sampler."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class NeighborSampler:
    def __init__(self, edge_index, num_nodes, fanouts, seed=0):
        self.fanouts = list(fanouts)
        self.rng = np.random.default_rng(seed)
        src, dst = edge_index.numpy()
        order = np.argsort(dst, kind="stable")
        self.col = src[order]
        self.rowptr = np.concatenate([[0], np.cumsum(np.bincount(dst, minlength=num_nodes))])

    def set_fanouts(self, fanouts):
        self.fanouts = list(fanouts)

    def sample(self, seeds):
        """Returns the node ids of the computation graph and one block per hop."""
        nodes = list(seeds)
        node_pos = {n: i for i, n in enumerate(nodes)}
        frontier = list(seeds)
        blocks = []
        for fanout in self.fanouts:
            src_local, dst_local, nxt = [], [], []
            for n in frontier:
                start, end = self.rowptr[n], self.rowptr[n + 1]
                neigh = self.col[start:end]
                if len(neigh) > fanout:
                    neigh = self.rng.choice(neigh, fanout, replace=False)
                for m in neigh:
                    if m not in node_pos:
                        node_pos[m] = len(nodes)
                        nodes.append(m)
                        nxt.append(m)
                    src_local.append(node_pos[m])
                    dst_local.append(node_pos[n])
            blocks.append(torch.tensor([src_local, dst_local], dtype=torch.long))
            frontier = nxt
        return torch.tensor(nodes, dtype=torch.long), blocks[::-1]


class SAGEConv(nn.Module):
    def __init__(self, in_dim, out_dim, aggr="mean"):
        super().__init__()
        self.lin_self = nn.Linear(in_dim, out_dim)
        self.lin_neigh = nn.Linear(in_dim, out_dim, bias=False)
        self.aggr = aggr

    def forward(self, x, edge_index):
        src, dst = edge_index
        agg = torch.zeros_like(x).index_add_(0, dst, x[src])
        if self.aggr == "mean":
            deg = torch.zeros(x.size(0), device=x.device).index_add_(0, dst, torch.ones_like(dst, dtype=x.dtype))
            agg = agg / deg.clamp(min=1).unsqueeze(-1)
        return self.lin_self(x) + self.lin_neigh(agg)


class GraphSAGE(nn.Module):
    def __init__(self, in_dim, hidden, out_dim, num_layers=2):
        super().__init__()
        dims = [in_dim] + [hidden] * (num_layers - 1) + [out_dim]
        self.convs = nn.ModuleList(SAGEConv(a, b) for a, b in zip(dims[:-1], dims[1:]))

    def forward(self, x, blocks):
        for i, (conv, block) in enumerate(zip(self.convs, blocks)):
            x = conv(x, block)
            if i < len(self.convs) - 1:
                x = F.relu(x)
        return x


def main():
    torch.manual_seed(0)
    num_nodes, num_edges, in_dim = 60, 300, 12
    edge_index = torch.randint(0, num_nodes, (2, num_edges))
    features = torch.randn(num_nodes, in_dim)
    labels = torch.randint(0, 4, (num_nodes,))

    sampler = NeighborSampler(edge_index, num_nodes, fanouts=[5, 3])
    model = GraphSAGE(in_dim, 32, 4)
    step_model = torch.compile(model)
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)

    train_ids = torch.randperm(num_nodes)[:24]
    for epoch in range(2):
        for seeds in train_ids.split(8):
            n_id, blocks = sampler.sample(seeds.tolist())
            out = step_model(features[n_id], blocks)[: len(seeds)]
            loss = F.cross_entropy(out, labels[seeds])
            opt.zero_grad()
            loss.backward()
            opt.step()
        sampler.set_fanouts([10, 10])
        print(f"epoch {epoch} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
