"""VAE on binarised toy images: compiled ELBO with constant reduction/beta and Normal.rsample."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal, kl_divergence


class VAE(nn.Module):
    def __init__(self, d_in=64, hidden=32, z=4):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU())
        self.mu = nn.Linear(hidden, z)
        self.logvar = nn.Linear(hidden, z)
        self.dec = nn.Sequential(nn.Linear(z, hidden), nn.ReLU(), nn.Linear(hidden, d_in))

    def forward(self, x):
        h = self.enc(x)
        q = Normal(self.mu(h), torch.exp(0.5 * self.logvar(h)))
        z = q.rsample()
        return self.dec(z), q


BETA = 1.0


@torch.compile
def elbo_loss(model, x, reduction="sum"):
    recon_logits, q = model(x)
    prior = Normal(torch.zeros_like(q.loc), torch.ones_like(q.scale))
    rec = F.binary_cross_entropy_with_logits(recon_logits, x, reduction=reduction)
    kl = kl_divergence(q, prior).sum()
    if reduction == "sum":
        return (rec + BETA * kl) / x.shape[0]
    return rec + BETA * kl / x.shape[0]


def main():
    torch.manual_seed(0)
    random.seed(0)
    model = VAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = (torch.rand(64, 64) > 0.5).float()
    for epoch in range(3):
        for i in range(0, 64, 16):
            loss = elbo_loss(model, data[i:i + 16])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return loss.item()


if __name__ == "__main__":
    print(main())
