"""Two-layer GCN run over mini-batches of graphs with different node and edge counts."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GCNConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.lin = nn.Linear(cin, cout, bias=False)
        self.bias = nn.Parameter(torch.zeros(cout))

    def forward(self, x, edge_index, num_nodes, add_self_loops=True):
        src, dst = edge_index[0], edge_index[1]
        if add_self_loops:
            loops = torch.arange(num_nodes)
            src = torch.cat([src, loops])
            dst = torch.cat([dst, loops])
        deg = torch.zeros(num_nodes).index_add_(0, dst, torch.ones(dst.shape[0]))
        norm = deg.clamp(min=1).rsqrt()
        h = self.lin(x)
        msg = h[src] * (norm[src] * norm[dst])[:, None]
        out = torch.zeros(num_nodes, h.shape[1]).index_add_(0, dst, msg)
        return out + self.bias


class GCN(nn.Module):
    def __init__(self, cin, hidden, n_classes):
        super().__init__()
        self.conv1 = GCNConv(cin, hidden)
        self.conv2 = GCNConv(hidden, n_classes)

    def forward(self, x, edge_index, num_nodes, add_self_loops=True):
        h = F.relu(self.conv1(x, edge_index, num_nodes, add_self_loops))
        h = F.dropout(h, 0.2, self.training)
        return self.conv2(h, edge_index, num_nodes, add_self_loops)


def random_graph(n, e, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 8, generator=g), torch.randint(0, n, (2, e), generator=g), torch.randint(0, 3, (n,), generator=g)


def collate(graphs):
    xs, eis, ys, offset = [], [], [], 0
    for x, ei, y in graphs:
        xs.append(x)
        eis.append(ei + offset)
        ys.append(y)
        offset += x.shape[0]
    return torch.cat(xs), torch.cat(eis, dim=1), torch.cat(ys), offset


def main():
    torch.manual_seed(0)
    model = torch.compile(GCN(8, 16, 3))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    dataset = [random_graph(n, 2 * n, i) for i, n in enumerate([6, 9, 7, 12, 5, 10])]
    for i in range(0, len(dataset), 2):
        x, ei, y, n = collate(dataset[i:i + 2])
        loss = F.cross_entropy(model(x, ei, n), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    # inference on a graph that already carries its self loops
    x, ei, y = random_graph(8, 16, 99)
    ei = torch.cat([ei, torch.arange(8).repeat(2, 1)], dim=1)
    model.eval()
    with torch.no_grad():
        print(model(x, ei, 8, add_self_loops=False).argmax(-1))


if __name__ == "__main__":
    main()
