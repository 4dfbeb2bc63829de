"""DDIM sampler with classifier-free guidance over a small epsilon-prediction MLP."""
from __future__ import annotations

import math
from typing import List

import torch
import torch.nn as nn


def cosine_alphas_cumprod(num_steps: int, s: float = 0.008) -> torch.Tensor:
    t = torch.linspace(0, num_steps, num_steps + 1) / num_steps
    f = torch.cos((t + s) / (1 + s) * math.pi / 2) ** 2
    return (f / f[0])[1:].clamp(1e-5, 1.0)


class EpsModel(nn.Module):
    def __init__(self, dim: int = 16, n_cls: int = 4, hidden: int = 64) -> None:
        super().__init__()
        self.cls_emb = nn.Embedding(n_cls + 1, hidden)   # last index = unconditional
        self.t_proj = nn.Linear(1, hidden)
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.SiLU(), nn.Linear(hidden, dim))
        self.null_class = n_cls

    def forward(self, x: torch.Tensor, t: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        h = self.net[0](x) + self.t_proj(t[:, None].float() / 1000) + self.cls_emb(y)
        return self.net[2](self.net[1](h))


@torch.compile
def ddim_step(model: EpsModel, x: torch.Tensor, y: torch.Tensor, t: int, t_prev: int,
              alphas_cumprod: torch.Tensor, guidance: float, eta: float = 0.0) -> torch.Tensor:
    tt = torch.full((x.shape[0],), t, dtype=torch.long)
    eps_c = model(x, tt, y)
    eps_u = model(x, tt, torch.full_like(y, model.null_class))
    eps = eps_u + guidance * (eps_c - eps_u)
    a_t = alphas_cumprod[t]
    a_prev = alphas_cumprod[t_prev] if t_prev >= 0 else torch.tensor(1.0)
    x0 = (x - (1 - a_t).sqrt() * eps) / a_t.sqrt()
    sigma = eta * ((1 - a_prev) / (1 - a_t) * (1 - a_t / a_prev)).sqrt()
    dir_xt = (1 - a_prev - sigma ** 2).clamp(min=0).sqrt() * eps
    noise = sigma * torch.randn_like(x) if eta > 0 else 0.0
    return a_prev.sqrt() * x0 + dir_xt + noise


def make_timesteps(train_steps: int, sample_steps: int) -> List[int]:
    stride = train_steps // sample_steps
    return list(range(train_steps - 1, -1, -stride))


def sample(model: EpsModel, labels: torch.Tensor, steps: int, guidance: float, eta: float) -> torch.Tensor:
    ac = cosine_alphas_cumprod(1000)
    ts = make_timesteps(1000, steps)
    x = torch.randn(labels.shape[0], 16)
    for i, t in enumerate(ts):
        t_prev = ts[i + 1] if i + 1 < len(ts) else -1
        x = ddim_step(model, x, labels, t, t_prev, ac, guidance, eta)
    return x


def main() -> None:
    torch.manual_seed(0)
    model = EpsModel().eval()
    labels = torch.tensor([0, 1, 2, 3])
    with torch.no_grad():
        for guidance, eta in [(3.0, 0.0), (5.0, 0.0), (3.0, 0.5)]:
            out = sample(model, labels, steps=6, guidance=guidance, eta=eta)
            print(guidance, eta, float(out.std()))


if __name__ == "__main__":
    main()
