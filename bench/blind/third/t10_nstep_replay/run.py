import copy

import torch
import torch.nn as nn

from .buffer import NStepReplay


class QNet(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, n_actions))

    def forward(self, x):
        return self.net(x)


class DoubleDQNLearner:
    def __init__(self, obs_dim, n_actions, buffer, batch_size=16, target_every=2):
        self.online = QNet(obs_dim, n_actions)
        self.target = copy.deepcopy(self.online)
        self.buffer = buffer
        self.batch_size = batch_size
        self.target_every = target_every
        self.opt = torch.optim.Adam(self.online.parameters(), lr=1e-3)
        self.updates = 0

    @torch.compile(backend="eager")
    def td_loss(self):
        obs, act, ret, nxt, done = self.buffer.sample(self.batch_size)
        q = self.online(obs).gather(1, act[:, None]).squeeze(1)
        with torch.no_grad():
            best = self.online(nxt).argmax(dim=1, keepdim=True)
            q_next = self.target(nxt).gather(1, best).squeeze(1)
            target = ret + (1.0 - done) * (self.buffer.gamma ** self.buffer.n_step) * q_next
        return nn.functional.smooth_l1_loss(q, target)

    def update(self):
        loss = self.td_loss()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.updates += 1
        if self.updates % self.target_every == 0:
            self.target.load_state_dict(self.online.state_dict())
        return loss.detach()


def main():
    torch.manual_seed(0)
    buf = NStepReplay(128, 4)
    learner = DoubleDQNLearner(4, 3, buf)
    obs = torch.randn(4)
    for t in range(60):
        nxt = torch.randn(4)
        buf.push(obs, t % 3, 1.0 if t % 5 == 0 else 0.0, nxt, t % 20 == 19)
        obs = nxt
        if t >= 20 and t % 10 == 0:
            learner.update()
