import random

import torch
import torch.nn as nn
import torch.nn.functional as F


class QNetwork(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, n_actions))

    def forward(self, obs):
        return self.net(obs)


class DQNAgent:
    def __init__(self, obs_dim, n_actions, gamma=0.99, lr=1e-3, target_update=4):
        self.n_actions = n_actions
        self.gamma = gamma
        self.target_update = target_update
        self.q = QNetwork(obs_dim, n_actions)
        self.q_target = QNetwork(obs_dim, n_actions)
        self.q_target.load_state_dict(self.q.state_dict())
        self.opt = torch.optim.Adam(self.q.parameters(), lr=lr)
        self.learn_steps = 0
        self.act = torch.compile(self._act)
        self.td_loss = torch.compile(self._td_loss)

    @torch.no_grad()
    def _act(self, obs, epsilon):
        if random.random() < epsilon:
            return torch.randint(0, self.n_actions, (obs.shape[0],))
        return self.q(obs).argmax(dim=-1)

    def _td_loss(self, obs, actions, rewards, next_obs, dones):
        q = self.q(obs).gather(1, actions[:, None]).squeeze(1)
        with torch.no_grad():
            next_q = self.q_target(next_obs).max(dim=-1).values
            target = rewards + self.gamma * (1.0 - dones) * next_q
        self.learn_steps += 1
        if self.learn_steps % self.target_update == 0:
            self.q_target.load_state_dict(self.q.state_dict())
        return F.smooth_l1_loss(q, target)

    def learn(self, batch):
        loss = self.td_loss(*batch)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.detach()
