"""DQN agent with epsilon-greedy action selection; the act() method is compiled."""
import random
from collections import deque

import numpy as np
import torch
import torch.nn as nn


class QNetwork(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=64, dueling=True):
        super().__init__()
        self.dueling = dueling
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.adv = nn.Linear(hidden, n_actions)
        self.val = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.body(obs)
        adv = self.adv(h)
        if self.dueling:
            return self.val(h) + adv - adv.mean(dim=-1, keepdim=True)
        return adv


class Agent:
    def __init__(self, obs_dim, n_actions, eps_start=1.0, eps_end=0.05, eps_decay=0.9):
        self.q = QNetwork(obs_dim, n_actions)
        self.n_actions = n_actions
        self.eps = eps_start
        self.eps_end, self.eps_decay = eps_end, eps_decay
        self.steps = 0
        self.recent_q = deque(maxlen=100)
        self.act = torch.compile(self.act)

    def act(self, obs, greedy=False):
        self.steps += 1
        if not greedy and random.random() < self.eps:
            return random.randrange(self.n_actions)
        with torch.no_grad():
            q = self.q(obs.unsqueeze(0))
        self.recent_q.append(q.max().item())
        return int(q.argmax(dim=-1))

    def decay(self):
        self.eps = max(self.eps_end, self.eps * self.eps_decay)


def main():
    torch.manual_seed(0)
    random.seed(0)
    agent = Agent(6, 3)
    obs = torch.randn(6)
    actions = []
    for t in range(5):
        a = agent.act(obs, greedy=(t % 2 == 0))
        actions.append(a)
        obs = torch.randn(6)
        agent.decay()
    return actions, np.mean(agent.recent_q) if agent.recent_q else None


if __name__ == "__main__":
    print(main())
