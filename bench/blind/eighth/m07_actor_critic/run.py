"""Training loop: variable-length episodes, annealed entropy bonus."""
from __future__ import annotations

import torch

from .buffer import EpisodeBuffer
from .networks import Actor, Critic, a2c_loss

OBS_DIM, ACT_DIM = 4, 2


def rollout(actor: Actor, buf: EpisodeBuffer, max_len: int) -> float:
    obs = torch.randn(OBS_DIM)
    total = 0.0
    for t in range(max_len):
        with torch.no_grad():
            mean, std = actor(obs)
            action = mean + std * torch.randn_like(mean)
        reward = -float((obs[:ACT_DIM] - action).pow(2).sum())
        buf.add(obs, action, reward)
        total += reward
        obs = 0.9 * obs + 0.1 * torch.randn(OBS_DIM)
        if reward < -6.0:
            break
    return total


def main() -> None:
    torch.manual_seed(0)
    actor, critic = Actor(OBS_DIM, ACT_DIM), Critic(OBS_DIM)
    opt = torch.optim.Adam(list(actor.parameters()) + list(critic.parameters()), lr=3e-3)
    buf = EpisodeBuffer()
    entropy_coef = 0.01
    for episode in range(6):
        ep_return = rollout(actor, buf, max_len=10 + 3 * episode)
        obs, actions, returns = buf.tensors()
        loss, info = a2c_loss(actor, critic, obs, actions, returns, entropy_coef)
        opt.zero_grad()
        loss.backward()
        opt.step()
        buf.clear()
        entropy_coef = max(0.001, entropy_coef * 0.8)
        print(f"ep {episode} return {ep_return:.2f} value {info['value'].item():.3f}")


if __name__ == "__main__":
    main()
