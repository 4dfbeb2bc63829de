import random

import torch


class ReplayBuffer:
    def __init__(self, capacity, obs_dim):
        self.capacity = capacity
        self.obs = torch.zeros(capacity, obs_dim)
        self.act = torch.zeros(capacity, dtype=torch.long)
        self.rew = torch.zeros(capacity)
        self.prio = torch.ones(capacity)
        self.size = 0
        self.ptr = 0

    def add(self, obs, act, rew):
        self.obs[self.ptr] = obs
        self.act[self.ptr] = act
        self.rew[self.ptr] = rew
        self.ptr = (self.ptr + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, batch_size):
        idx = random.sample(range(self.size), batch_size)
        idx = torch.tensor(idx)
        return idx, self.obs[idx], self.act[idx], self.rew[idx]

    def sample_prioritized(self, batch_size, alpha=0.6):
        p = self.prio[: self.size] ** alpha
        p = p / p.sum()
        idx = torch.multinomial(p, batch_size, replacement=True)
        weights = (self.size * p[idx]) ** -0.4
        return idx, self.obs[idx], weights / weights.max()

    def update_priorities(self, idx, td_err):
        self.prio[idx] = td_err.abs().detach() + 1e-3
