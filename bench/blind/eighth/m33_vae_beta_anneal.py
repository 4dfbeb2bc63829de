"""Beta-VAE with KL annealing; the annealed coefficient lives in a tensor so the loss graph is stable."""
from __future__ import annotations

from typing import Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


class VAE(nn.Module):
    def __init__(self, d: int = 20, z: int = 4) -> None:
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d, 32), nn.ReLU(), nn.Linear(32, 2 * z))
        self.dec = nn.Sequential(nn.Linear(z, 32), nn.ReLU(), nn.Linear(32, d))

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        mu, logvar = self.enc(x).chunk(2, dim=-1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.dec(z), mu, logvar


@torch.compile
def elbo_loss(model: VAE, x: torch.Tensor, beta: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    recon, mu, logvar = model(x)
    rec = F.mse_loss(recon, x, reduction="none").sum(-1).mean()
    kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(-1).mean()
    return rec + beta * kl, kl.detach()


class BetaSchedule:
    """Cyclical linear annealing (Fu et al. 2019), written into a persistent tensor."""

    def __init__(self, cycle: int = 4, max_beta: float = 1.0) -> None:
        self.cycle = cycle
        self.max_beta = max_beta
        self.value = torch.zeros(())

    def step(self, it: int) -> torch.Tensor:
        phase = (it % self.cycle) / (self.cycle / 2)
        self.value.fill_(self.max_beta * min(1.0, phase))
        return self.value


def main() -> None:
    torch.manual_seed(0)
    model = VAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    beta = BetaSchedule()
    data = torch.randn(96, 20)
    for it in range(6):
        x = data[(it * 16) % 96:(it * 16) % 96 + 16]
        loss, kl = elbo_loss(model, x, beta.step(it))
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(it, round(beta.value.item(), 2), round(loss.item(), 3), round(kl.item(), 3))


if __name__ == "__main__":
    main()
