"""Two-layer GCN with symmetric normalisation via scatter/index_add (PyG-free). Clean: one graph, fixed sizes."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def add_self_loops(edge_index, num_nodes):
    loops = torch.arange(num_nodes, device=edge_index.device)
    return torch.cat([edge_index, torch.stack([loops, loops])], dim=1)


def gcn_norm(edge_index, num_nodes):
    row, col = edge_index
    deg = torch.zeros(num_nodes, dtype=torch.float32).scatter_add_(0, col, torch.ones_like(col, dtype=torch.float32))
    dinv = deg.pow(-0.5)
    dinv = dinv.masked_fill(torch.isinf(dinv), 0.0)
    return dinv[row] * dinv[col]


class GCNConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.lin = nn.Linear(cin, cout, bias=False)
        self.bias = nn.Parameter(torch.zeros(cout))

    def forward(self, x, edge_index, norm):
        h = self.lin(x)
        row, col = edge_index
        msg = h[row] * norm[:, None]
        out = torch.zeros_like(h).index_add_(0, col, msg)
        return out + self.bias


class GCN(nn.Module):
    def __init__(self, cin, hidden, classes, dropout=0.5):
        super().__init__()
        self.convs = nn.ModuleList([GCNConv(cin, hidden), GCNConv(hidden, classes)])
        self.dropout = dropout

    def forward(self, x, edge_index):
        n = x.size(0)
        edge_index = add_self_loops(edge_index, n)
        norm = gcn_norm(edge_index, n)
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index, norm)
            if i < len(self.convs) - 1:
                x = F.relu(x)
                x = F.dropout(x, self.dropout, self.training)
        return F.log_softmax(x, dim=-1)


def main():
    torch.manual_seed(0)
    n, e = 50, 200
    x = torch.randn(n, 16)
    edge_index = torch.randint(0, n, (2, e))
    y = torch.randint(0, 4, (n,))
    model = GCN(16, 32, 4)
    model.eval()
    model.compile()
    with torch.no_grad():
        for _ in range(3):
            out = model(x, edge_index)
    return F.nll_loss(out, y).item()


if __name__ == "__main__":
    print(main())
