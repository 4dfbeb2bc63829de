"""Double DQN on a tiny chain MDP with a numpy replay buffer."""
import copy
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

N_STATES, N_ACTIONS = 8, 2


class ReplayBuffer:
    def __init__(self, capacity, obs_dim, seed=0):
        self.obs = np.zeros((capacity, obs_dim), dtype=np.float32)
        self.next_obs = np.zeros((capacity, obs_dim), dtype=np.float32)
        self.actions = np.zeros(capacity, dtype=np.int64)
        self.rewards = np.zeros(capacity, dtype=np.float32)
        self.dones = np.zeros(capacity, dtype=np.float32)
        self.capacity, self.size, self.ptr = capacity, 0, 0
        self.rng = np.random.default_rng(seed)

    def push(self, o, a, r, o2, d):
        i = self.ptr
        self.obs[i], self.actions[i], self.rewards[i], self.next_obs[i], self.dones[i] = o, a, r, o2, d
        self.ptr = (self.ptr + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, batch_size):
        idx = self.rng.integers(0, self.size, size=batch_size)
        return self.obs[idx], self.actions[idx], self.rewards[idx], self.next_obs[idx], self.dones[idx]


class QNet(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=32):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, n_actions))

    def forward(self, x):
        return self.body(x)


def one_hot_state(s):
    v = np.zeros(N_STATES, dtype=np.float32)
    v[s] = 1.0
    return v


def env_step(s, a):
    s2 = min(s + 1, N_STATES - 1) if a == 1 else max(s - 1, 0)
    done = s2 == N_STATES - 1
    return s2, (1.0 if done else -0.01), done


class Agent:
    def __init__(self, gamma=0.99, tau=0.05, target_every=4):
        self.q = QNet(N_STATES, N_ACTIONS)
        self.q_target = copy.deepcopy(self.q)
        self.opt = torch.optim.Adam(self.q.parameters(), lr=1e-3)
        self.gamma, self.tau, self.target_every = gamma, tau, target_every

    @torch.compile
    def act(self, obs, epsilon):
        if random.random() < epsilon:
            return random.randrange(N_ACTIONS)
        q = self.q(torch.as_tensor(obs).unsqueeze(0))
        return int(q.argmax())

    @torch.compile
    def td_loss(self, obs, actions, rewards, next_obs, dones):
        obs, next_obs = torch.from_numpy(obs), torch.from_numpy(next_obs)
        actions, rewards, dones = torch.from_numpy(actions), torch.from_numpy(rewards), torch.from_numpy(dones)
        q = self.q(obs).gather(1, actions[:, None]).squeeze(1)
        with torch.no_grad():
            next_a = self.q(next_obs).argmax(1, keepdim=True)
            next_q = self.q_target(next_obs).gather(1, next_a).squeeze(1)
            target = rewards + self.gamma * (1 - dones) * next_q
        return F.smooth_l1_loss(q, target)

    @torch.compile
    def sync_target(self, step):
        if step % self.target_every == 0:
            with torch.no_grad():
                for p_t, p in zip(self.q_target.parameters(), self.q.parameters()):
                    p_t.lerp_(p, self.tau)


def main():
    random.seed(0)
    torch.manual_seed(0)
    buf = ReplayBuffer(256, N_STATES)
    agent = Agent()
    eps, eps_min, eps_decay = 1.0, 0.05, 0.97
    s = 0
    for step in range(1, 41):
        a = agent.act(one_hot_state(s), eps)
        s2, r, done = env_step(s, a)
        buf.push(one_hot_state(s), a, r, one_hot_state(s2), float(done))
        s = 0 if done else s2
        eps = max(eps_min, eps * eps_decay)
        if buf.size >= 16:
            loss = agent.td_loss(*buf.sample(16))
            agent.opt.zero_grad()
            loss.backward()
            agent.opt.step()
            agent.sync_target(step)
    return eps
