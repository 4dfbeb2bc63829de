"""Reinforcement learning: epsilon-greedy DQN agent with a decaying exploration schedule and TD targets."""
import random

import torch
import torch.nn as nn


class QNet(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, n_actions))

    def forward(self, obs):
        if obs.dim() == 1:
            obs = obs.unsqueeze(0)
        return self.body(obs)


class Agent:
    def __init__(self, obs_dim, n_actions):
        self.q = QNet(obs_dim, n_actions)
        self.target = QNet(obs_dim, n_actions)
        self.n_actions = n_actions
        self.steps = 0
        self.eps = 1.0

    def act(self, obs):
        self.steps += 1
        self.eps = max(0.05, 1.0 - self.steps / 500)
        if random.random() < self.eps:
            return random.randrange(self.n_actions)
        return int(self.q(obs).argmax(-1))

    def td_target(self, reward, next_obs, done, gamma=0.99):
        with torch.no_grad():
            next_q = self.target(next_obs).max(-1).values
        return reward + gamma * (1.0 - done) * next_q


def main():
    torch.manual_seed(0)
    random.seed(0)
    agent = Agent(4, 3)
    act = torch.compile(agent.act, backend="eager")
    for _ in range(3):
        act(torch.randn(4))

    td = torch.compile(agent.td_target, backend="eager")
    td(torch.randn(8), torch.randn(8, 4), torch.zeros(8))
    td(torch.randn(8), torch.randn(8, 4), torch.ones(8), 0.9)
