from collections import namedtuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

Batch = namedtuple("Batch", ["obs", "actions", "rewards", "next_obs", "dones", "indices", "weights"])


class PrioritizedReplayBuffer:
    def __init__(self, capacity: int, obs_dim: int, alpha: float = 0.6, eps: float = 1e-6):
        self.capacity = capacity
        self.alpha = alpha
        self.eps = eps
        self.obs = torch.zeros(capacity, obs_dim)
        self.next_obs = torch.zeros(capacity, obs_dim)
        self.actions = torch.zeros(capacity, dtype=torch.long)
        self.rewards = torch.zeros(capacity)
        self.dones = torch.zeros(capacity)
        self.priorities = torch.zeros(capacity)
        self.max_priority = 1.0
        self.pos = 0
        self.size = 0

    def add(self, obs, action, reward, next_obs, done):
        self.obs[self.pos] = obs
        self.actions[self.pos] = action
        self.rewards[self.pos] = reward
        self.next_obs[self.pos] = next_obs
        self.dones[self.pos] = float(done)
        self.priorities[self.pos] = self.max_priority
        self.pos = (self.pos + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, batch_size: int, beta: float = 0.4) -> Batch:
        prios = self.priorities[: self.size]
        probs = prios ** self.alpha
        probs = probs / probs.sum()
        indices = torch.multinomial(probs, batch_size, replacement=True)
        weights = (self.size * probs[indices]) ** (-beta)
        weights = weights / weights.max()
        return Batch(self.obs[indices], self.actions[indices], self.rewards[indices], self.next_obs[indices],
                     self.dones[indices], indices, weights)

    def update_priorities(self, indices: torch.Tensor, td_errors: torch.Tensor):
        priorities = td_errors.abs().detach().cpu().numpy() + self.eps
        for idx, prio in zip(indices.tolist(), priorities.tolist()):
            self.priorities[idx] = prio
            self.max_priority = max(self.max_priority, prio)


class QNetwork(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, n_actions))

    def forward(self, x):
        return self.net(x)


class DoubleDQNLearner:
    def __init__(self, q_net, target_net, gamma=0.99, lr=1e-3):
        self.q_net = q_net
        self.target_net = target_net
        self.gamma = gamma
        self.optimizer = torch.optim.Adam(q_net.parameters(), lr=lr)

    @torch.compile
    def td_errors(self, batch: Batch):
        q = self.q_net(batch.obs).gather(1, batch.actions[:, None]).squeeze(1)
        with torch.no_grad():
            next_actions = self.q_net(batch.next_obs).argmax(1, keepdim=True)
            next_q = self.target_net(batch.next_obs).gather(1, next_actions).squeeze(1)
            target = batch.rewards + self.gamma * (1.0 - batch.dones) * next_q
        return q, target

    def learn(self, buffer, sample_fn, batch_size, beta):
        batch = sample_fn(batch_size, beta)
        q, target = self.td_errors(batch)
        loss = (batch.weights * F.smooth_l1_loss(q, target, reduction="none")).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        buffer.update_priorities(batch.indices, (q - target).detach())
        return loss.item()


def main():
    torch.manual_seed(0)
    np.random.seed(0)
    obs_dim, n_actions = 6, 3
    buffer = PrioritizedReplayBuffer(256, obs_dim)
    buffer.update_priorities = torch.compile(buffer.update_priorities)
    sample_fn = torch.compile(buffer.sample)
    q_net, target_net = QNetwork(obs_dim, n_actions), QNetwork(obs_dim, n_actions)
    target_net.load_state_dict(q_net.state_dict())
    learner = DoubleDQNLearner(q_net, target_net)
    obs = torch.randn(obs_dim)
    total_steps = 3
    for it in range(total_steps):
        for _ in range(16):
            next_obs = torch.randn(obs_dim)
            buffer.add(obs, int(torch.randint(0, n_actions, ())), float(torch.rand(())), next_obs, False)
            obs = next_obs
        beta = 0.4 + (1.0 - 0.4) * it / total_steps
        learner.learn(buffer, sample_fn, 8, beta)


if __name__ == "__main__":
    main()
