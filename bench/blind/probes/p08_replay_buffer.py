"""Replay buffer kept as preallocated tensors; insertion and DDQN learn step are compiled."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class ReplayBuffer:
    def __init__(self, capacity, obs_dim):
        self.capacity = capacity
        self.obs = torch.zeros(capacity, obs_dim)
        self.next_obs = torch.zeros(capacity, obs_dim)
        self.actions = torch.zeros(capacity, dtype=torch.long)
        self.rewards = torch.zeros(capacity)
        self.dones = torch.zeros(capacity)
        self.ptr = 0
        self.size = 0

    @torch.compile
    def add(self, obs, action, reward, next_obs, done):
        i = self.ptr
        self.obs[i] = obs
        self.next_obs[i] = next_obs
        self.actions[i] = action
        self.rewards[i] = reward
        self.dones[i] = float(done)
        self.ptr = (self.ptr + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, batch_size):
        idx = np.random.randint(0, self.size, size=batch_size)
        idx = torch.from_numpy(idx)
        return self.obs[idx], self.actions[idx], self.rewards[idx], self.next_obs[idx], self.dones[idx]


class DDQN(nn.Module):
    def __init__(self, obs_dim, n_actions, gamma=0.99, tau=0.01):
        super().__init__()
        self.online = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, n_actions))
        self.target = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, n_actions))
        self.target.load_state_dict(self.online.state_dict())
        self.gamma, self.tau = gamma, tau

    def td_loss(self, batch):
        obs, act, rew, nxt, done = batch
        q = self.online(obs).gather(1, act[:, None]).squeeze(1)
        with torch.no_grad():
            a_star = self.online(nxt).argmax(1, keepdim=True)
            target = rew + self.gamma * (1 - done) * self.target(nxt).gather(1, a_star).squeeze(1)
        return F.smooth_l1_loss(q, target)

    @torch.no_grad()
    def soft_update(self):
        for p, tp in zip(self.online.parameters(), self.target.parameters()):
            tp.mul_(1 - self.tau).add_(p, alpha=self.tau)


@torch.compile
def learn(agent, buffer, opt, batch_size):
    loss = agent.td_loss(buffer.sample(batch_size))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    agent.soft_update()
    return loss.detach()


def main():
    torch.manual_seed(0)
    np.random.seed(0)
    buf = ReplayBuffer(64, 4)
    agent = DDQN(4, 2)
    opt = torch.optim.SGD(agent.online.parameters(), lr=1e-2)
    for t in range(6):
        buf.add(torch.randn(4), t % 2, 1.0, torch.randn(4), t == 5)
    losses = [learn(agent, buf, opt, 8) for _ in range(3)]
    return torch.stack(losses)


if __name__ == "__main__":
    print(main())
