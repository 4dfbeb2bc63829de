"""Online observation normalisation for an RL agent, with running statistics kept in module-level defaults."""
from __future__ import annotations

from typing import Dict

import torch
import torch.nn as nn

_OBS_STATS: Dict[str, float] = {"mean": 0.0, "var": 1.0, "count": 1e-4}


@torch.compile
def normalize_obs(obs: torch.Tensor, stats: Dict[str, float] = _OBS_STATS, clip: float = 5.0) -> torch.Tensor:
    z = (obs - stats["mean"]) / (stats["var"] + 1e-8) ** 0.5
    return z.clamp(-clip, clip)


def update_stats(batch: torch.Tensor, stats: Dict[str, float] = _OBS_STATS) -> None:
    """Chan et al. parallel variance update, stored as plain floats for checkpointing."""
    b_mean, b_var, b_count = batch.mean().item(), batch.var().item(), batch.numel()
    delta = b_mean - stats["mean"]
    tot = stats["count"] + b_count
    new_mean = stats["mean"] + delta * b_count / tot
    m2 = stats["var"] * stats["count"] + b_var * b_count + delta ** 2 * stats["count"] * b_count / tot
    stats.update(mean=new_mean, var=m2 / tot, count=tot)


class Policy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(5, 32), nn.Tanh(), nn.Linear(32, 2))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.net(obs)


def env_step(obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
    return 3.0 + 0.95 * obs + 0.2 * torch.randn_like(obs) + 0.1 * action.mean(-1, keepdim=True)


def main() -> None:
    torch.manual_seed(0)
    policy = Policy()
    obs = torch.randn(8, 5) + 3.0
    with torch.no_grad():
        for t in range(5):
            update_stats(obs)
            action = policy(normalize_obs(obs))
            obs = env_step(obs, action)
            print(t, round(_OBS_STATS["mean"], 4), round(_OBS_STATS["var"], 4))


if __name__ == "__main__":
    main()
