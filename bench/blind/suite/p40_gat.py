"""Graph attention network over a fixed-size batch of graphs, using scatter operations throughout."""
import torch
import torch.nn as nn


def scatter_softmax(src, index, num_nodes):
    m = torch.full((num_nodes,), float("-inf")).scatter_reduce(0, index, src, reduce="amax", include_self=True)
    e = (src - m[index]).exp()
    s = torch.zeros(num_nodes).index_add_(0, index, e)
    return e / (s[index] + 1e-16)


class GATLayer(nn.Module):
    def __init__(self, d, heads=2):
        super().__init__()
        assert d % heads == 0
        self.heads = heads
        self.lin = nn.Linear(d, d, bias=False)
        self.att = nn.Parameter(torch.randn(heads, 2 * (d // heads)) * 0.1)

    def forward(self, x, edge_index):
        n = x.shape[0]
        src, dst = edge_index[0], edge_index[1]
        h = self.lin(x).view(n, self.heads, -1)
        a = (torch.cat([h[src], h[dst]], dim=-1) * self.att).sum(-1)
        a = torch.where(a > 0, a, 0.2 * a)
        out = torch.zeros_like(h)
        for k in range(self.heads):
            w = scatter_softmax(a[:, k], dst, n)
            out[:, k] = torch.zeros(n, h.shape[-1]).index_add_(0, dst, w[:, None] * h[src, k])
        return out.reshape(n, -1)


class GAT(nn.Module):
    def __init__(self, d=8, layers=3, residual=True):
        super().__init__()
        self.layers = nn.ModuleList([GATLayer(d) for _ in range(layers)])
        self.residual = residual

    def forward(self, x, edge_index, batch, num_graphs):
        for i, layer in enumerate(self.layers):
            h = layer(x, edge_index).relu()
            x = x + h if (self.residual and i > 0) else h
        pooled = torch.zeros(num_graphs, x.shape[-1]).index_add_(0, batch, x)
        counts = torch.zeros(num_graphs).index_add_(0, batch, torch.ones(x.shape[0]))
        return pooled / counts.clamp(min=1)[:, None]


def main():
    torch.manual_seed(0)
    model = GAT()
    model.compile(backend="eager")
    batch = torch.tensor([0] * 6 + [1] * 6)
    model(torch.randn(12, 8), torch.randint(0, 12, (2, 30)), batch, 2)
    model(torch.randn(12, 8), torch.randint(0, 12, (2, 30)), batch, 2)
