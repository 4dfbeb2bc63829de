"""PPO update: clipped surrogate, value loss and entropy bonus over fixed-size minibatches."""
from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass(frozen=True)
class PPOConfig:
    clip_eps: float = 0.2
    vf_coef: float = 0.5
    ent_coef: float = 0.01
    epochs: int = 2
    minibatch: int = 16


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=6, n_actions=4, hidden=32):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.body(obs)
        return self.pi(h), self.v(h).squeeze(-1)


def ppo_loss(model, obs, actions, old_logp, advantages, returns, cfg: PPOConfig):
    logits, values = model(obs)
    dist = torch.distributions.Categorical(logits=logits)
    logp = dist.log_prob(actions)
    adv = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    ratio = torch.exp(logp - old_logp)
    surr = torch.min(ratio * adv, torch.clamp(ratio, 1 - cfg.clip_eps, 1 + cfg.clip_eps) * adv)
    v_loss = (returns - values).pow(2).mean()
    return -surr.mean() + cfg.vf_coef * v_loss - cfg.ent_coef * dist.entropy().mean()


def main():
    torch.manual_seed(0)
    cfg = PPOConfig()
    model = ActorCritic()
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    loss_fn = torch.compile(ppo_loss)
    n = 48
    obs, actions = torch.randn(n, 6), torch.randint(0, 4, (n,))
    with torch.no_grad():
        logits, _ = model(obs)
        old_logp = torch.distributions.Categorical(logits=logits).log_prob(actions)
    advantages, returns = torch.randn(n), torch.randn(n)
    for _ in range(cfg.epochs):
        perm = torch.randperm(n)
        for i in range(0, n, cfg.minibatch):
            idx = perm[i:i + cfg.minibatch]
            loss = loss_fn(model, obs[idx], actions[idx], old_logp[idx], advantages[idx], returns[idx], cfg)
            opt.zero_grad()
            loss.backward()
            opt.step()


if __name__ == "__main__":
    main()
