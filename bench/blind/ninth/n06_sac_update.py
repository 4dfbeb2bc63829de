"""Soft Actor-Critic: replay buffer in numpy, compiled update() doing both critic and actor steps."""
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal

LOG_STD_MIN, LOG_STD_MAX = -5.0, 2.0


def mlp(in_dim, out_dim, hidden=32):
    return nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, out_dim))


class ReplayBuffer:
    def __init__(self, obs_dim, act_dim, capacity=1000):
        self.obs = np.zeros((capacity, obs_dim), dtype=np.float32)
        self.next_obs = np.zeros((capacity, obs_dim), dtype=np.float32)
        self.act = np.zeros((capacity, act_dim), dtype=np.float32)
        self.rew = np.zeros((capacity, 1), dtype=np.float32)
        self.done = np.zeros((capacity, 1), dtype=np.float32)
        self.capacity, self.ptr, self.size = capacity, 0, 0

    def add(self, o, a, r, o2, d):
        self.obs[self.ptr], self.act[self.ptr], self.rew[self.ptr] = o, a, r
        self.next_obs[self.ptr], self.done[self.ptr] = o2, d
        self.ptr = (self.ptr + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, batch_size):
        idx = np.random.randint(0, self.size, size=batch_size)
        return {k: torch.as_tensor(getattr(self, k)[idx]) for k in ("obs", "act", "rew", "next_obs", "done")}


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.net = mlp(obs_dim, 2 * act_dim)

    def forward(self, obs):
        mu, log_std = self.net(obs).chunk(2, dim=-1)
        log_std = torch.tanh(log_std)
        log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (log_std + 1)
        dist = Normal(mu, log_std.exp())
        x = dist.rsample()
        action = torch.tanh(x)
        log_prob = dist.log_prob(x) - torch.log(1 - action.pow(2) + 1e-6)
        return action, log_prob.sum(-1, keepdim=True)


class DoubleQ(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.q1 = mlp(obs_dim + act_dim, 1)
        self.q2 = mlp(obs_dim + act_dim, 1)

    def forward(self, obs, act):
        x = torch.cat([obs, act], dim=-1)
        return self.q1(x), self.q2(x)


class SACAgent:
    def __init__(self, obs_dim, act_dim, gamma=0.99, tau=0.005, lr=3e-4):
        self.actor = Actor(obs_dim, act_dim)
        self.critic = DoubleQ(obs_dim, act_dim)
        self.critic_target = DoubleQ(obs_dim, act_dim)
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.target_entropy = -float(act_dim)
        self.gamma, self.tau = gamma, tau
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=lr)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=lr)
        self.alpha_opt = torch.optim.Adam([self.log_alpha], lr=lr)

    @property
    def alpha(self):
        return self.log_alpha.exp()

    def act(self, obs):
        with torch.no_grad():
            a, _ = self.actor(torch.as_tensor(obs).unsqueeze(0))
        return a[0].numpy()

    @torch.compile
    def update(self, batch):
        with torch.no_grad():
            next_a, next_logp = self.actor(batch["next_obs"])
            tq1, tq2 = self.critic_target(batch["next_obs"], next_a)
            target_q = torch.min(tq1, tq2) - self.alpha.detach() * next_logp
            target = batch["rew"] + self.gamma * (1.0 - batch["done"]) * target_q
        q1, q2 = self.critic(batch["obs"], batch["act"])
        critic_loss = F.mse_loss(q1, target) + F.mse_loss(q2, target)
        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()

        a, logp = self.actor(batch["obs"])
        q1_pi, q2_pi = self.critic(batch["obs"], a)
        actor_loss = (self.alpha.detach() * logp - torch.min(q1_pi, q2_pi)).mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()

        alpha_loss = -(self.log_alpha * (logp.detach() + self.target_entropy)).mean()
        self.alpha_opt.zero_grad()
        alpha_loss.backward()
        self.alpha_opt.step()

        with torch.no_grad():
            for p, tp in zip(self.critic.parameters(), self.critic_target.parameters()):
                tp.data.mul_(1.0 - self.tau).add_(self.tau * p.data)
        return {"critic_loss": critic_loss.item(), "actor_loss": actor_loss.item(),
                "alpha": self.alpha.item()}


class PointEnv:
    """2-D point mass that should move to the origin."""

    def __init__(self, seed=0):
        self.rng = np.random.RandomState(seed)
        self.state = None

    def reset(self):
        self.state = self.rng.uniform(-1, 1, size=2).astype(np.float32)
        return self.state.copy()

    def step(self, action):
        self.state = np.clip(self.state + 0.1 * action, -2, 2).astype(np.float32)
        reward = -float(np.linalg.norm(self.state))
        return self.state.copy(), reward, reward > -0.05


def main():
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    env, buf = PointEnv(), ReplayBuffer(2, 2)
    agent = SACAgent(2, 2)
    obs = env.reset()
    stats = {}
    for t in range(40):
        a = agent.act(obs) if t >= 20 else np.random.uniform(-1, 1, size=2).astype(np.float32)
        obs2, r, done = env.step(a)
        buf.add(obs, a, r, obs2, float(done))
        obs = env.reset() if done else obs2
        if t >= 20 and t % 10 == 0:
            stats = agent.update(buf.sample(16))
    return stats


if __name__ == "__main__":
    print(main())
