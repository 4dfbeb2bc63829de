"""Uniform replay with n-step returns; storage lives in preallocated tensors, the n-step window in a deque."""
import collections

import numpy as np
import torch


class NStepReplay:
    def __init__(self, capacity, obs_dim, n_step=3, gamma=0.99, seed=0):
        self.capacity = capacity
        self.n_step = n_step
        self.gamma = gamma
        self.obs = torch.zeros(capacity, obs_dim)
        self.next_obs = torch.zeros(capacity, obs_dim)
        self.actions = torch.zeros(capacity, dtype=torch.long)
        self.returns = torch.zeros(capacity)
        self.dones = torch.zeros(capacity)
        self.window = collections.deque(maxlen=n_step)
        self.rng = np.random.default_rng(seed)
        self.ptr = 0
        self.full = False

    def __len__(self):
        return self.capacity if self.full else self.ptr

    def push(self, obs, action, reward, next_obs, done):
        self.window.append((obs, action, reward, next_obs, done))
        if len(self.window) < self.n_step and not done:
            return
        ret, last_next, last_done = 0.0, next_obs, done
        for k, (_, _, r, n_o, d) in enumerate(self.window):
            ret += (self.gamma ** k) * r
            if d:
                last_next, last_done = n_o, d
                break
        o0, a0 = self.window[0][0], self.window[0][1]
        self.obs[self.ptr] = o0
        self.actions[self.ptr] = a0
        self.returns[self.ptr] = ret
        self.next_obs[self.ptr] = last_next
        self.dones[self.ptr] = float(last_done)
        self.ptr = (self.ptr + 1) % self.capacity
        self.full = self.full or self.ptr == 0
        if done:
            self.window.clear()

    def sample(self, batch_size):
        idx = self.rng.integers(0, len(self), size=batch_size)
        idx = torch.as_tensor(idx)
        return self.obs[idx], self.actions[idx], self.returns[idx], self.next_obs[idx], self.dones[idx]
