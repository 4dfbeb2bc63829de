"""DQN with an epsilon-greedy policy whose act() is compiled, plus a compiled TD-loss."""
import random
from collections import deque

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class QNetwork(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=32, dueling=True):
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


class DQNAgent:
    def __init__(self, obs_dim, n_actions, gamma=0.99):
        self.n_actions = n_actions
        self.gamma = gamma
        self.q = QNetwork(obs_dim, n_actions)
        self.q_target = QNetwork(obs_dim, n_actions)
        self.q_target.load_state_dict(self.q.state_dict())
        self.opt = torch.optim.Adam(self.q.parameters(), lr=1e-3)
        self.act = torch.compile(self._act)
        self.td_loss = torch.compile(self._td_loss)

    def _act(self, obs, epsilon):
        if random.random() < epsilon:
            return torch.randint(0, self.n_actions, (obs.shape[0],))
        with torch.no_grad():
            return self.q(obs).argmax(dim=-1)

    def _td_loss(self, obs, actions, rewards, next_obs, dones):
        q = self.q(obs).gather(1, actions.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            next_actions = self.q(next_obs).argmax(dim=1, keepdim=True)
            next_q = self.q_target(next_obs).gather(1, next_actions).squeeze(1)
            target = rewards + self.gamma * (1.0 - dones) * next_q
        return F.smooth_l1_loss(q, target)


class ChainEnv:
    def __init__(self, n=6, seed=0):
        self.n = n
        self.rng = np.random.RandomState(seed)
        self.pos = 0

    def reset(self):
        self.pos = 0
        return self._obs()

    def _obs(self):
        o = np.zeros(self.n, dtype=np.float32)
        o[self.pos] = 1.0
        return o

    def step(self, a):
        self.pos = min(self.pos + 1, self.n - 1) if a == 1 else max(self.pos - 1, 0)
        done = self.pos == self.n - 1
        return self._obs(), float(done), done


def linear_schedule(start, end, duration, t):
    return end + (start - end) * max(0.0, (duration - t) / duration)


def main():
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    env = ChainEnv()
    agent = DQNAgent(env.n, 2)
    replay = deque(maxlen=500)
    obs = env.reset()
    loss = None
    for t in range(40):
        eps = linear_schedule(1.0, 0.05, 30, t)
        a = int(agent.act(torch.from_numpy(obs).unsqueeze(0), eps)[0])
        obs2, r, done = env.step(a)
        replay.append((obs, a, r, obs2, float(done)))
        obs = env.reset() if done else obs2
        if len(replay) >= 16 and t % 4 == 0:
            batch = random.sample(replay, 16)
            o, a_, r_, o2, d = map(np.array, zip(*batch))
            loss = agent.td_loss(torch.from_numpy(o), torch.from_numpy(a_).long(), torch.from_numpy(r_).float(),
                                 torch.from_numpy(o2), torch.from_numpy(d).float())
            agent.opt.zero_grad()
            loss.backward()
            agent.opt.step()
        if t % 20 == 0:
            agent.q_target.load_state_dict(agent.q.state_dict())
    return loss.item()


if __name__ == "__main__":
    print(main())
