"""SimCLR NT-Xent loss with optional cross-process gather, plus a compiled top-1 accuracy metric."""
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


def gather_all(x):
    if not (dist.is_available() and dist.is_initialized()):
        return x
    out = [torch.zeros_like(x) for _ in range(dist.get_world_size())]
    dist.all_gather(out, x)
    out[dist.get_rank()] = x
    return torch.cat(out)


@torch.compile
def nt_xent(z1, z2, temperature=0.5):
    z1, z2 = F.normalize(z1, dim=-1), F.normalize(z2, dim=-1)
    z = torch.cat([gather_all(z1), gather_all(z2)])
    n = z.size(0) // 2
    sim = z @ z.t() / temperature
    sim.fill_diagonal_(float("-inf"))
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, targets)


class ProjectionHead(nn.Module):
    def __init__(self, din, dout=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(din, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, dout))

    def forward(self, x):
        return self.net(x)


class SimCLR(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 32))
        self.proj = ProjectionHead(32)

    def forward(self, v1, v2):
        return self.proj(self.encoder(v1)), self.proj(self.encoder(v2))


@torch.compile
@torch.no_grad()
def knn_accuracy(train_feats, train_labels, test_feats, test_labels, k=5):
    sims = F.normalize(test_feats, dim=-1) @ F.normalize(train_feats, dim=-1).t()
    topk = sims.topk(k, dim=-1).indices
    votes = train_labels[topk]
    pred = torch.mode(votes, dim=-1).values
    correct = int((pred == test_labels).sum())
    return 100.0 * correct / len(test_labels)


def main():
    torch.manual_seed(0)
    model = torch.compile(SimCLR())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        x = torch.randn(8, 20)
        z1, z2 = model(x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x))
        loss = nt_xent(z1, z2)
        opt.zero_grad()
        loss.backward()
        opt.step()
    feats = torch.randn(30, 16)
    labels = torch.randint(0, 3, (30,))
    accs = [knn_accuracy(feats[:20], labels[:20], feats[20:], labels[20:]) for _ in range(2)]
    return loss.item(), accs


if __name__ == "__main__":
    print(main())
