"""VQ-VAE quantiser with EMA codebook, perplexity metric and dead-code restarts."""
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F


class VectorQuantizerEMA(nn.Module):
    def __init__(self, num_codes=16, dim=4, decay=0.9, eps=1e-5, dead_threshold=0.05):
        super().__init__()
        self.num_codes, self.dim, self.decay, self.eps = num_codes, dim, decay, eps
        self.dead_threshold = dead_threshold
        self.register_buffer("codebook", torch.randn(num_codes, dim))
        self.register_buffer("cluster_size", torch.ones(num_codes))
        self.register_buffer("embed_avg", self.codebook.clone())
        self.restarts = 0

    def forward(self, z):
        flat = z.reshape(-1, self.dim)
        d = flat.pow(2).sum(1, keepdim=True) - 2 * flat @ self.codebook.t() + self.codebook.pow(2).sum(1)
        codes = d.argmin(1)
        onehot = F.one_hot(codes, self.num_codes).type(flat.dtype)
        quant = self.codebook[codes].view_as(z)
        if self.training:
            with torch.no_grad():
                self.cluster_size.mul_(self.decay).add_(onehot.sum(0), alpha=1 - self.decay)
                self.embed_avg.mul_(self.decay).add_(onehot.t() @ flat, alpha=1 - self.decay)
                n = self.cluster_size.sum()
                size = (self.cluster_size + self.eps) / (n + self.num_codes * self.eps) * n
                self.codebook.copy_(self.embed_avg / size[:, None])
                self.restart_dead_codes(flat)
        avg = onehot.mean(0)
        perplexity = torch.exp(-(avg * torch.log(avg + 1e-10)).sum())
        commit = F.mse_loss(z, quant.detach())
        quant = z + (quant - z).detach()
        return quant, commit, perplexity

    def restart_dead_codes(self, flat):
        usage = self.cluster_size / self.cluster_size.sum()
        dead = torch.nonzero(usage < self.dead_threshold / self.num_codes).squeeze(1)
        if len(dead) > 0:
            picks = flat[torch.randint(0, flat.size(0), (dead.numel(),))]
            self.codebook[dead] = picks
            self.embed_avg[dead] = picks
            self.cluster_size[dead] = 1.0
            self.restarts += int(dead.numel())
            if self.restarts > 10:
                warnings.warn(f"{self.restarts} codebook restarts so far")


class VQAutoencoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 8))
        self.vq = VectorQuantizerEMA()
        self.dec = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 12))

    def forward(self, x):
        z = self.enc(x).view(x.size(0), 2, 4)
        q, commit, ppl = self.vq(z)
        return self.dec(q.view(x.size(0), 8)), commit, ppl


def main():
    torch.manual_seed(0)
    model = VQAutoencoder()
    step = torch.compile(model)
    for _ in range(3):
        x = torch.randn(16, 12)
        rec, commit, ppl = step(x)
        (F.mse_loss(rec, x) + 0.25 * commit).backward()
    return ppl.item()


if __name__ == "__main__":
    print(main())
