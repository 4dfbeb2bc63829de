"""PPO update step: GAE, clipped objective, backward + optimizer step all inside torch.compile."""
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.distributions import Categorical


@dataclass
class PPOConfig:
    gamma: float = 0.99
    lam: float = 0.95
    clip: float = 0.2
    vf_coef: float = 0.5
    ent_coef: float = 0.01
    max_grad_norm: float = 0.5


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=32):
        super().__init__()
        self.pi = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, n_actions))
        self.v = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    def forward(self, obs):
        return Categorical(logits=self.pi(obs)), self.v(obs).squeeze(-1)


def compute_gae(rewards, values, dones, last_value, gamma, lam):
    T = rewards.shape[0]
    adv = torch.zeros_like(rewards)
    last = torch.zeros_like(last_value)
    for t in reversed(range(T)):
        next_v = last_value if t == T - 1 else values[t + 1]
        nonterm = 1.0 - dones[t]
        delta = rewards[t] + gamma * next_v * nonterm - values[t]
        last = delta + gamma * lam * nonterm * last
        adv[t] = last
    return adv, adv + values


def make_update(model, opt, cfg):
    @torch.compile
    def update(obs, actions, old_logp, rewards, dones, values, last_value):
        adv, returns = compute_gae(rewards, values, dones, last_value, cfg.gamma, cfg.lam)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        dist, v = model(obs)
        logp = dist.log_prob(actions)
        ratio = (logp - old_logp).exp()
        pg = -torch.min(ratio * adv, ratio.clamp(1 - cfg.clip, 1 + cfg.clip) * adv).mean()
        vf = (returns - v).pow(2).mean()
        ent = dist.entropy().mean()
        loss = pg + cfg.vf_coef * vf - cfg.ent_coef * ent
        opt.zero_grad()
        loss.backward()
        gn = nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
        opt.step()
        clipfrac = ((ratio - 1).abs() > cfg.clip).float().mean()
        return {"loss": loss.item(), "pg": pg.item(), "vf": vf.item(), "entropy": ent.item(),
                "clipfrac": clipfrac.item(), "grad_norm": gn.item()}
    return update


def main():
    torch.manual_seed(0)
    T, obs_dim = 16, 4
    model = ActorCritic(obs_dim, 2)
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    update = make_update(model, opt, PPOConfig())
    for it in range(2):
        obs = torch.randn(T, obs_dim)
        with torch.no_grad():
            dist, values = model(obs)
            actions = dist.sample()
            old_logp = dist.log_prob(actions)
        rewards = torch.randn(T)
        dones = (torch.rand(T) < 0.1).float()
        stats = update(obs, actions, old_logp, rewards, dones, values, torch.zeros(()))
    return stats


if __name__ == "__main__":
    print(main())
