"""Policy/value networks and the compiled A2C objective."""
from __future__ import annotations

import torch
import torch.nn as nn
from torch.distributions import Normal


class Actor(nn.Module):
    def __init__(self, obs_dim: int, act_dim: int, hidden: int = 32) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, act_dim))
        self.log_std = nn.Parameter(torch.full((act_dim,), -0.5))

    def forward(self, obs: torch.Tensor):
        return self.body(obs), self.log_std.exp()


class Critic(nn.Module):
    def __init__(self, obs_dim: int, hidden: int = 32) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.body(obs).squeeze(-1)


@torch.compile
def a2c_loss(actor: Actor, critic: Critic, obs: torch.Tensor, actions: torch.Tensor,
             returns: torch.Tensor, entropy_coef: float, value_coef: float = 0.5):
    mean, std = actor(obs)
    dist = Normal(mean, std)
    logp = dist.log_prob(actions).sum(-1)
    values = critic(obs)
    adv = (returns - values).detach()
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    policy_loss = -(logp * adv).mean()
    value_loss = (returns - values).pow(2).mean()
    entropy = dist.entropy().sum(-1).mean()
    total = policy_loss + value_coef * value_loss - entropy_coef * entropy
    return total, {"policy": policy_loss.detach(), "value": value_loss.detach(), "entropy": entropy.detach()}
