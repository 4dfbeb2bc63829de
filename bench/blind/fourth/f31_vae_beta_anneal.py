import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def frange_cycle_linear(n_iter, start=0.0, stop=1.0, n_cycle=4, ratio=0.5):
    L = np.ones(n_iter) * stop
    period = n_iter / n_cycle
    step = (stop - start) / (period * ratio)
    for c in range(n_cycle):
        v, i = start, 0
        while v <= stop and (int(i + c * period) < n_iter):
            L[int(i + c * period)] = v
            v += step
            i += 1
    return L


class VAE(nn.Module):
    def __init__(self, in_dim=64, hidden=32, latent=8):
        super().__init__()
        self.fc1 = nn.Linear(in_dim, hidden)
        self.fc21 = nn.Linear(hidden, latent)
        self.fc22 = nn.Linear(hidden, latent)
        self.fc3 = nn.Linear(latent, hidden)
        self.fc4 = nn.Linear(hidden, in_dim)
        self.in_dim = in_dim

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, self.in_dim))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def loss_function(model, x, beta, free_bits: float = 0.0):
    recon_x, mu, logvar = model(x)
    bce = F.binary_cross_entropy(recon_x, x.view(-1, model.in_dim), reduction="sum")
    kld_per_dim = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp())
    if free_bits > 0:
        kld_per_dim = torch.clamp(kld_per_dim.mean(0), min=free_bits) * x.shape[0]
    kld = kld_per_dim.sum()
    loss = bce + beta * kld
    if torch.isnan(loss):
        raise RuntimeError("loss is NaN; lower the learning rate")
    return loss, bce.detach(), kld.detach()


def main():
    torch.manual_seed(0)
    model = VAE()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    compute_loss = torch.compile(loss_function)
    betas = frange_cycle_linear(8, n_cycle=2)
    data = torch.rand(24, 64)
    for it in range(3):
        x = data[it * 8 : (it + 1) * 8]
        loss, bce, kld = compute_loss(model, x, betas[it])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
