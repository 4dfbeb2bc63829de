"""Runtime feature flags for a denoising autoencoder service (numerics checks, fast GELU)."""
from __future__ import annotations

import os

import torch
import torch.nn as nn
import torch.nn.functional as F

CHECK_NUMERICS = os.environ.get("DAE_CHECK_NUMERICS", "0") == "1"
FAST_GELU = False


def configure(check_numerics: bool | None = None, fast_gelu: bool | None = None) -> None:
    global CHECK_NUMERICS, FAST_GELU
    if check_numerics is not None:
        CHECK_NUMERICS = check_numerics
    if fast_gelu is not None:
        FAST_GELU = fast_gelu


def activation(x: torch.Tensor) -> torch.Tensor:
    return F.gelu(x, approximate="tanh") if FAST_GELU else F.gelu(x)


class DenoisingAE(nn.Module):
    def __init__(self, d: int = 24, h: int = 8) -> None:
        super().__init__()
        self.enc = nn.Linear(d, h)
        self.dec = nn.Linear(h, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = activation(self.enc(x))
        if CHECK_NUMERICS and not torch.isfinite(z).all():
            raise FloatingPointError("non-finite latent")
        return self.dec(z)


def main() -> None:
    torch.manual_seed(0)
    model = DenoisingAE()
    cmodel = torch.compile(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    clean = torch.randn(32, 24)
    for step in range(6):
        if step == 2:
            configure(check_numerics=True)
        if step == 4:
            configure(check_numerics=False, fast_gelu=True)
        noisy = clean + 0.3 * torch.randn_like(clean)
        loss = F.mse_loss(cmodel(noisy), clean)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, CHECK_NUMERICS, FAST_GELU, round(loss.item(), 4))


if __name__ == "__main__":
    main()
