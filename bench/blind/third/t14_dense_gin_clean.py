"""Dense GIN on padded molecule batches: adjacency matmul aggregation, node masks, masked sum readout."""
import torch
import torch.nn as nn


class DenseGINLayer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.eps = nn.Parameter(torch.zeros(1))
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.BatchNorm1d(dim), nn.ReLU(), nn.Linear(dim, dim))

    def forward(self, x, adj, mask):
        b, n, d = x.shape
        h = (1 + self.eps) * x + adj @ x
        h = self.mlp(h.reshape(b * n, d)).reshape(b, n, d)
        return h * mask[..., None]


class DenseGIN(nn.Module):
    def __init__(self, in_dim, hidden, n_layers, n_tasks):
        super().__init__()
        self.embed = nn.Linear(in_dim, hidden)
        self.layers = nn.ModuleList(DenseGINLayer(hidden) for _ in range(n_layers))
        self.readout = nn.Linear(hidden * (n_layers + 1), n_tasks)

    def forward(self, x, adj, mask):
        h = self.embed(x) * mask[..., None]
        reps = [h.sum(1)]
        for layer in self.layers:
            h = torch.relu(layer(h, adj, mask)) + h
            reps.append(h.sum(1))
        return self.readout(torch.cat(reps, dim=-1))


def make_batch(b, max_nodes, in_dim, gen):
    n_nodes = torch.randint(3, max_nodes + 1, (b,), generator=gen)
    mask = (torch.arange(max_nodes)[None] < n_nodes[:, None]).float()
    a = (torch.rand(b, max_nodes, max_nodes, generator=gen) < 0.3).float()
    a = torch.triu(a, 1)
    adj = (a + a.transpose(1, 2)) * mask[:, :, None] * mask[:, None, :]
    x = torch.randn(b, max_nodes, in_dim, generator=gen) * mask[..., None]
    return x, adj, mask


def main():
    gen = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    model = DenseGIN(9, 32, 3, 2)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    train_step_model = torch.compile(model, backend="eager")
    for _ in range(3):
        x, adj, mask = make_batch(8, 12, 9, gen)
        target = torch.randn(8, 2)
        loss = nn.functional.mse_loss(train_step_model(x, adj, mask), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
