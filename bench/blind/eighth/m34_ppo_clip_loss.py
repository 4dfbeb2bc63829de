"""PPO update epochs over a fixed-size rollout, with minibatches of equal size."""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.distributions import Categorical

ROLLOUT, MINIBATCH, OBS, ACTS = 64, 16, 6, 3


@dataclass(frozen=True)
class PPOHyper:
    clip: float = 0.2
    vf_coef: float = 0.5
    ent_coef: float = 0.01


class ActorCritic(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(OBS, 32), nn.Tanh())
        self.pi = nn.Linear(32, ACTS)
        self.v = nn.Linear(32, 1)

    def forward(self, obs: torch.Tensor):
        h = self.body(obs)
        return self.pi(h), self.v(h).squeeze(-1)


HP = PPOHyper()


@torch.compile
def ppo_loss(model: ActorCritic, obs, actions, old_logp, adv, returns) -> torch.Tensor:
    logits, values = model(obs)
    dist = Categorical(logits=logits)
    logp = dist.log_prob(actions)
    ratio = (logp - old_logp).exp()
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    pg = -torch.min(ratio * adv, ratio.clamp(1 - HP.clip, 1 + HP.clip) * adv).mean()
    vf = (returns - values).pow(2).mean()
    return pg + HP.vf_coef * vf - HP.ent_coef * dist.entropy().mean()


def collect(model: ActorCritic):
    obs = torch.randn(ROLLOUT, OBS)
    with torch.no_grad():
        logits, values = model(obs)
        dist = Categorical(logits=logits)
        actions = dist.sample()
        logp = dist.log_prob(actions)
    rewards = (actions == obs[:, :ACTS].argmax(-1)).float()
    return obs, actions, logp, rewards - values, rewards


def main() -> None:
    torch.manual_seed(0)
    model = ActorCritic()
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    for update in range(2):
        obs, actions, logp, adv, ret = collect(model)
        for epoch in range(2):
            perm = torch.randperm(ROLLOUT)
            for s in range(0, ROLLOUT, MINIBATCH):
                i = perm[s:s + MINIBATCH]
                loss = ppo_loss(model, obs[i], actions[i], logp[i], adv[i], ret[i])
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), 0.5)
                opt.step()
        print(update, round(loss.item(), 4))


if __name__ == "__main__":
    main()
