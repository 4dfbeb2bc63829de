"""Dense GIN for molecule-sized graphs padded to a fixed node budget.

Graphs are padded to ``MAX_NODES`` so every training batch has identical
shapes; a node mask removes the padding from the readout.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

MAX_NODES = 16
BATCH_SIZE = 8


class DenseGINConv(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.eps = nn.Parameter(torch.zeros(1))
        self.mlp = nn.Sequential(nn.Linear(in_dim, out_dim), nn.ReLU(), nn.Linear(out_dim, out_dim))

    def forward(self, x, adj, mask):
        out = torch.bmm(adj, x) + (1 + self.eps) * x
        return self.mlp(out) * mask.unsqueeze(-1)


class DenseGIN(nn.Module):
    def __init__(self, in_dim, hidden, num_layers, num_tasks):
        super().__init__()
        dims = [in_dim] + [hidden] * num_layers
        self.convs = nn.ModuleList(DenseGINConv(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.readout = nn.Linear(hidden * num_layers, num_tasks)

    def forward(self, x, adj, mask):
        hs = []
        for conv in self.convs:
            x = F.relu(conv(x, adj, mask))
            hs.append(x)
        h = torch.cat(hs, dim=-1)
        denom = mask.sum(dim=1, keepdim=True).clamp(min=1.0)
        pooled = h.sum(dim=1) / denom
        return self.readout(pooled)


def pad_graph(num_nodes, in_dim, generator):
    x = torch.zeros(MAX_NODES, in_dim)
    adj = torch.zeros(MAX_NODES, MAX_NODES)
    mask = torch.zeros(MAX_NODES)
    x[:num_nodes] = torch.randn(num_nodes, in_dim, generator=generator)
    a = (torch.rand(num_nodes, num_nodes, generator=generator) < 0.3).float()
    adj[:num_nodes, :num_nodes] = torch.triu(a, 1) + torch.triu(a, 1).T
    mask[:num_nodes] = 1.0
    return x, adj, mask


def make_batch(in_dim, generator):
    sizes = torch.randint(4, MAX_NODES + 1, (BATCH_SIZE,), generator=generator).tolist()
    xs, adjs, masks = zip(*(pad_graph(n, in_dim, generator) for n in sizes))
    return torch.stack(xs), torch.stack(adjs), torch.stack(masks)


def bce_with_missing(logits, targets):
    valid = ~torch.isnan(targets)
    loss = F.binary_cross_entropy_with_logits(logits, torch.nan_to_num(targets), reduction="none")
    return (loss * valid).sum() / valid.sum().clamp(min=1)


@torch.compile
def train_forward(model, x, adj, mask, targets):
    return bce_with_missing(model(x, adj, mask), targets)


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    in_dim, num_tasks = 9, 3
    model = DenseGIN(in_dim, 32, num_layers=3, num_tasks=num_tasks)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    for step in range(4):
        x, adj, mask = make_batch(in_dim, g)
        targets = torch.randint(0, 2, (BATCH_SIZE, num_tasks), generator=g).float()
        targets[torch.rand(targets.shape, generator=g) < 0.2] = float("nan")
        loss = train_forward(model, x, adj, mask, targets)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    print("final loss", loss.item())


if __name__ == "__main__":
    main()
