"""VAE on flattened images with a cyclical KL-annealing schedule."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class VAE(nn.Module):
    def __init__(self, in_dim=64, hidden=32, latent=4):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU())
        self.mu = nn.Linear(hidden, latent)
        self.logvar = nn.Linear(hidden, latent)
        self.dec = nn.Sequential(nn.Linear(latent, hidden), nn.ReLU(), nn.Linear(hidden, in_dim))
        self.beta = 0.0

    def forward(self, x):
        h = self.enc(x)
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        recon = self.dec(z)
        rec_loss = F.binary_cross_entropy_with_logits(recon, x, reduction="sum") / x.shape[0]
        kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / x.shape[0]
        return rec_loss + self.beta * kl, rec_loss.detach(), kl.detach()


class CyclicalAnnealer:
    def __init__(self, total_steps, n_cycles=2, ratio=0.5):
        self.period = total_steps / n_cycles
        self.ratio = ratio

    def __call__(self, step):
        tau = (step % self.period) / self.period
        return min(1.0, tau / self.ratio)


def main():
    torch.manual_seed(0)
    vae = VAE()
    model = torch.compile(vae)
    opt = torch.optim.Adam(vae.parameters(), lr=1e-3)
    annealer = CyclicalAnnealer(total_steps=6)
    data = (torch.rand(48, 64) > 0.5).float()
    for step in range(6):
        vae.beta = annealer(step)
        batch = data[step * 8:(step + 1) * 8]
        loss, rec, kl = model(batch)
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
