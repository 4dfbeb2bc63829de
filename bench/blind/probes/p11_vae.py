"""Convolutional VAE with beta-annealed ELBO; the loss function is compiled separately from the model."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, zdim):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(1, 8, 4, 2, 1), nn.ReLU(),
            nn.Conv2d(8, 16, 4, 2, 1), nn.ReLU(),
            nn.Flatten(),
        )
        self.mu = nn.Linear(16 * 4 * 4, zdim)
        self.logvar = nn.Linear(16 * 4 * 4, zdim)

    def forward(self, x):
        h = self.net(x)
        return self.mu(h), self.logvar(h).clamp(-10, 10)


class Decoder(nn.Module):
    def __init__(self, zdim):
        super().__init__()
        self.fc = nn.Linear(zdim, 16 * 4 * 4)
        self.net = nn.Sequential(
            nn.ConvTranspose2d(16, 8, 4, 2, 1), nn.ReLU(),
            nn.ConvTranspose2d(8, 1, 4, 2, 1),
        )

    def forward(self, z):
        return self.net(self.fc(z).view(-1, 16, 4, 4))


class VAE(nn.Module):
    def __init__(self, zdim=8):
        super().__init__()
        self.enc, self.dec = Encoder(zdim), Decoder(zdim)

    def reparameterize(self, mu, logvar):
        if self.training:
            return mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return mu

    def forward(self, x):
        mu, logvar = self.enc(x)
        z = self.reparameterize(mu, logvar)
        return self.dec(z), mu, logvar


@torch.compile
def elbo_loss(recon_logits, x, mu, logvar, beta, free_bits=0.0):
    rec = F.binary_cross_entropy_with_logits(recon_logits, x, reduction="sum") / x.size(0)
    kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp())
    if free_bits > 0:
        kl = kl.clamp(min=free_bits)
    kl = kl.sum(-1).mean()
    return rec + beta * kl, rec.detach(), kl.detach()


def beta_schedule(step, warmup=4):
    return min(1.0, step / warmup)


def main():
    torch.manual_seed(0)
    model = VAE()
    cmodel = torch.compile(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    history = []
    for step in range(4):
        x = (torch.rand(4, 1, 16, 16) > 0.5).float()
        model.train()
        recon, mu, logvar = cmodel(x)
        loss, rec, kl = elbo_loss(recon, x, mu, logvar, beta_schedule(step), free_bits=0.1 if step > 1 else 0.0)
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.append((rec.item(), kl.item()))
        model.eval()
        with torch.no_grad():
            recon, _, _ = cmodel(x)
    return history


if __name__ == "__main__":
    print(main())
