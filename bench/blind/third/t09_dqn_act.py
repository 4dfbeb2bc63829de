"""DQN agent acting in a toy environment: epsilon-greedy with a decaying epsilon, compiled act() bound method."""
import random

import torch
import torch.nn as nn


class QNet(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, n_actions))

    def forward(self, x):
        return self.fc(x)


class Agent:
    def __init__(self, obs_dim, n_actions, eps_start=1.0, eps_end=0.05, eps_decay=0.5):
        self.q = QNet(obs_dim, n_actions)
        self.n_actions = n_actions
        self.eps = eps_start
        self.eps_end = eps_end
        self.eps_decay = eps_decay
        self.steps_done = 0

    @torch.no_grad()
    def act(self, obs):
        self.steps_done += 1
        if random.random() < self.eps:
            return random.randrange(self.n_actions)
        q = self.q(obs.unsqueeze(0))
        return q.argmax(dim=1).item()

    def decay(self):
        self.eps = max(self.eps_end, self.eps * self.eps_decay)


class ToyEnv:
    def __init__(self, obs_dim=4):
        self.obs_dim = obs_dim
        self.t = 0

    def reset(self):
        self.t = 0
        return torch.randn(self.obs_dim)

    def step(self, action):
        self.t += 1
        return torch.randn(self.obs_dim), float(action == 1), self.t >= 3


def main():
    random.seed(0)
    torch.manual_seed(0)
    env = ToyEnv()
    agent = Agent(4, 2)
    agent.act = torch.compile(agent.act, backend="eager")
    for episode in range(2):
        obs, done = env.reset(), False
        while not done:
            a = agent.act(obs)
            obs, r, done = env.step(a)
        agent.decay()
