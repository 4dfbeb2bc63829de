"""DQN on a toy gridworld with an epsilon-greedy policy and a replay buffer."""
from __future__ import annotations

import random
from collections import deque
from typing import Deque, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

EPSILON = 1.0
EPS_MIN = 0.05
EPS_DECAY = 0.9
GAMMA = 0.99


class QNet(nn.Module):
    def __init__(self, obs_dim: int = 6, n_actions: int = 4) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, n_actions))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.net(obs)


@torch.compile
def select_actions(q_net: QNet, obs: torch.Tensor) -> torch.Tensor:
    q = q_net(obs)
    greedy = q.argmax(dim=-1)
    explore = torch.rand(greedy.shape) < EPSILON
    random_actions = torch.randint(0, q.shape[-1], greedy.shape)
    return torch.where(explore, random_actions, greedy)


@torch.compile
def td_loss(q_net: QNet, target_net: QNet, obs, actions, rewards, next_obs, dones) -> torch.Tensor:
    q = q_net(obs).gather(1, actions[:, None]).squeeze(1)
    with torch.no_grad():
        next_q = target_net(next_obs).max(dim=1).values
        target = rewards + GAMMA * (1 - dones) * next_q
    return F.smooth_l1_loss(q, target)


class ReplayBuffer:
    def __init__(self, capacity: int = 500) -> None:
        self.data: Deque[Tuple] = deque(maxlen=capacity)

    def push(self, *transition) -> None:
        self.data.append(transition)

    def sample(self, batch_size: int):
        batch = random.sample(self.data, min(batch_size, len(self.data)))
        obs, act, rew, nxt, done = zip(*batch)
        return (torch.stack(obs), torch.stack(act), torch.stack(rew), torch.stack(nxt), torch.stack(done))


def decay_epsilon() -> None:
    global EPSILON
    EPSILON = max(EPS_MIN, EPSILON * EPS_DECAY)


def main() -> None:
    torch.manual_seed(0)
    random.seed(0)
    q_net, target_net = QNet(), QNet()
    target_net.load_state_dict(q_net.state_dict())
    opt = torch.optim.Adam(q_net.parameters(), lr=1e-3)
    buf = ReplayBuffer()
    obs = torch.randn(4, 6)
    for step in range(6):
        with torch.no_grad():
            actions = select_actions(q_net, obs)
        next_obs = obs + 0.1 * torch.randn_like(obs)
        rewards = -next_obs.pow(2).sum(-1)
        for i in range(obs.shape[0]):
            buf.push(obs[i], actions[i], rewards[i], next_obs[i], torch.tensor(0.0))
        obs = next_obs
        loss = td_loss(q_net, target_net, *buf.sample(16))
        opt.zero_grad()
        loss.backward()
        opt.step()
        decay_epsilon()
    print("final loss", loss.item(), "eps", EPSILON)


if __name__ == "__main__":
    main()
