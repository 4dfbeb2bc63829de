import random

import torch
import torch.nn as nn

from .buffer import ReplayBuffer


class Critic(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 16), nn.Tanh(), nn.Linear(16, n_actions))

    def forward(self, obs):
        return self.net(obs)


def learn(critic, buf, batch_size):
    idx, obs, act, rew = buf.sample(batch_size)
    q = critic(obs).gather(1, act[:, None]).squeeze(1)
    td = rew - q
    buf.update_priorities(idx, td)
    return td.pow(2).mean()


def learn_prioritized(critic, buf, batch_size):
    idx, obs, w = buf.sample_prioritized(batch_size)
    q = critic(obs).max(1).values
    td = q - q.detach().mean()
    buf.update_priorities(idx, td)
    return (w * td.pow(2)).mean()


def main():
    random.seed(0)
    torch.manual_seed(0)
    buf = ReplayBuffer(64, 4)
    critic = Critic(4, 2)
    for _ in range(20):
        buf.add(torch.randn(4), 1, 0.5)

    step = torch.compile(learn, backend="eager")
    step(critic, buf, 8)
    buf.add(torch.randn(4), 0, 1.0)
    step(critic, buf, 8)

    pstep = torch.compile(learn_prioritized, backend="eager")
    pstep(critic, buf, 8)
    buf.add(torch.randn(4), 0, 1.0)
    pstep(critic, buf, 8)
