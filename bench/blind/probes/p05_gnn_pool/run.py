"""Graph-level classifier: GAT layers + mean pooling over a batch of graphs."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from .scatter_utils import global_mean_pool, scatter_sum, segment_softmax


class GATLayer(nn.Module):
    def __init__(self, cin, cout, heads=2):
        super().__init__()
        self.heads, self.cout = heads, cout
        self.lin = nn.Linear(cin, heads * cout, bias=False)
        self.att_src = nn.Parameter(torch.randn(1, heads, cout) * 0.1)
        self.att_dst = nn.Parameter(torch.randn(1, heads, cout) * 0.1)

    def forward(self, x, edge_index):
        src, dst = edge_index
        h = self.lin(x).view(-1, self.heads, self.cout)
        a = (h * self.att_src).sum(-1)[src] + (h * self.att_dst).sum(-1)[dst]
        a = segment_softmax(F.leaky_relu(a, 0.2), dst, x.size(0))
        out = scatter_sum(h[src] * a[..., None], dst)
        return out.reshape(-1, self.heads * self.cout)


class GraphClassifier(nn.Module):
    def __init__(self, cin, hidden, classes):
        super().__init__()
        self.layers = nn.ModuleList([GATLayer(cin, hidden), GATLayer(2 * hidden, hidden)])
        self.head = nn.Linear(2 * hidden, classes)

    def forward(self, x, edge_index, batch):
        for layer in self.layers:
            x = F.elu(layer(x, edge_index))
        return self.head(global_mean_pool(x, batch))


def make_batch(sizes):
    xs, edges, batch, offset = [], [], [], 0
    for g, n in enumerate(sizes):
        xs.append(torch.randn(n, 8))
        e = torch.randint(0, n, (2, 3 * n)) + offset
        loops = torch.arange(offset, offset + n)
        edges.append(torch.cat([e, torch.stack([loops, loops])], 1))
        batch.append(torch.full((n,), g))
        offset += n
    return torch.cat(xs), torch.cat(edges, 1), torch.cat(batch)


def main():
    torch.manual_seed(0)
    model = GraphClassifier(8, 16, 3)
    compiled = torch.compile(model)
    for sizes in ([5, 7, 6], [4, 9], [6, 6, 6, 5]):
        x, ei, b = make_batch(sizes)
        out = compiled(x, ei, b)
    return out.shape
