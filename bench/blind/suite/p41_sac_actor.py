"""Continuous-control actor-critic (SAC-style) with a dataclass config and squashed Gaussian policy."""
import dataclasses

import torch
import torch.nn as nn
from torch.distributions import Normal

LOG_STD_MIN, LOG_STD_MAX = -5.0, 2.0


@dataclasses.dataclass(frozen=True)
class SACConfig:
    obs_dim: int = 6
    act_dim: int = 2
    hidden: int = 32
    twin_q: bool = True
    act_limit: float = 1.0


class Actor(nn.Module):
    def __init__(self, cfg: SACConfig):
        super().__init__()
        self.cfg = cfg
        self.body = nn.Sequential(nn.Linear(cfg.obs_dim, cfg.hidden), nn.ReLU())
        self.mu = nn.Linear(cfg.hidden, cfg.act_dim)
        self.log_std = nn.Linear(cfg.hidden, cfg.act_dim)

    def forward(self, obs, deterministic: bool = False):
        assert obs.shape[-1] == self.cfg.obs_dim
        h = self.body(obs)
        mu = self.mu(h)
        log_std = self.log_std(h).clamp(LOG_STD_MIN, LOG_STD_MAX)
        dist = Normal(mu, log_std.exp())
        u = mu if deterministic else dist.rsample()
        logp = dist.log_prob(u).sum(-1) - (2 * (0.6931 - u - nn.functional.softplus(-2 * u))).sum(-1)
        return self.cfg.act_limit * torch.tanh(u), logp


class Critic(nn.Module):
    def __init__(self, cfg: SACConfig):
        super().__init__()
        n_q = 2 if cfg.twin_q else 1
        self.qs = nn.ModuleList(
            [nn.Sequential(nn.Linear(cfg.obs_dim + cfg.act_dim, cfg.hidden), nn.ReLU(), nn.Linear(cfg.hidden, 1))
             for _ in range(n_q)])

    def forward(self, obs, act):
        x = torch.cat([obs, act], dim=-1)
        qs = [q(x).squeeze(-1) for q in self.qs]
        return torch.stack(qs).min(0).values if len(qs) > 1 else qs[0]


def soft_target(critic, actor, obs2, rew, done, gamma=0.99, alpha=0.2):
    with torch.no_grad():
        a2, logp2 = actor(obs2)
        q2 = critic(obs2, a2)
        return rew + gamma * (1 - done) * (q2 - alpha * logp2)


def main():
    torch.manual_seed(0)
    cfg = SACConfig()
    actor, critic = Actor(cfg), Critic(cfg)
    actor.compile(backend="eager")
    actor(torch.randn(5, 6))
    actor(torch.randn(5, 6))
    st = torch.compile(soft_target, backend="eager")
    st(critic, actor, torch.randn(5, 6), torch.randn(5), torch.zeros(5))
    st(critic, actor, torch.randn(5, 6), torch.randn(5), torch.ones(5))
