"""PPO-style rollout: the policy gets a time-remaining feature read off the env; GAE over truncated rollouts."""
import random

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical


class EnvSpec:
    def __init__(self, max_episode_steps):
        self.max_episode_steps = max_episode_steps


class GridWalk:
    def __init__(self, size=5, max_steps=12, seed=0):
        self.spec = EnvSpec(max_steps)
        self.size = size
        self.rng = np.random.RandomState(seed)
        self.elapsed_steps = 0
        self.pos = np.zeros(2, dtype=np.int64)

    def reset(self):
        self.elapsed_steps = 0
        self.pos = self.rng.randint(0, self.size, size=2)
        return self.obs()

    def obs(self):
        o = np.zeros(2 * self.size, dtype=np.float32)
        o[self.pos[0]] = 1.0
        o[self.size + self.pos[1]] = 1.0
        return o

    def step(self, a):
        moves = [(0, 1), (1, 0), (0, -1), (-1, 0)]
        self.pos = np.clip(self.pos + np.array(moves[a]), 0, self.size - 1)
        self.elapsed_steps += 1
        done = bool((self.pos == self.size - 1).all())
        truncated = self.elapsed_steps >= self.spec.max_episode_steps
        return self.obs(), float(done), done, truncated


def time_remaining(env):
    return env.spec.max_episode_steps - env.elapsed_steps


class Policy(nn.Module):
    def __init__(self, obs_dim, n_actions=4, max_steps=12):
        super().__init__()
        self.max_steps = max_steps
        self.body = nn.Sequential(nn.Linear(obs_dim + 1, 32), nn.Tanh())
        self.pi = nn.Linear(32, n_actions)
        self.v = nn.Linear(32, 1)

    def forward(self, obs, steps_left):
        t = torch.full((obs.shape[0], 1), steps_left / self.max_steps)
        h = self.body(torch.cat([obs, t], dim=-1))
        return self.pi(h), self.v(h).squeeze(-1)


@torch.compile
def compute_gae(rewards, values, dones, last_value, num_steps: int, gamma: float = 0.99, lam: float = 0.95):
    advantages = torch.zeros_like(rewards)
    lastgaelam = torch.zeros(())
    for t in reversed(range(num_steps)):
        next_value = last_value if t == num_steps - 1 else values[t + 1]
        nonterminal = 1.0 - dones[t]
        delta = rewards[t] + gamma * next_value * nonterminal - values[t]
        lastgaelam = delta + gamma * lam * nonterminal * lastgaelam
        advantages[t] = lastgaelam
    return advantages, advantages + values


class Rollout:
    def __init__(self):
        self.rewards, self.values, self.dones = [], [], []

    @property
    def num_steps(self):
        return len(self.rewards)


def main():
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    env = GridWalk()
    policy = Policy(10)
    act = torch.compile(policy)
    obs = env.reset()
    adv_means = []
    for it in range(3):
        ro = Rollout()
        for _ in range(8):
            with torch.no_grad():
                logits, value = act(torch.from_numpy(obs)[None], time_remaining(env))
            a = Categorical(logits=logits).sample().item()
            obs, r, done, truncated = env.step(a)
            ro.rewards.append(r)
            ro.values.append(value.item())
            ro.dones.append(float(done))
            if done or truncated:
                obs = env.reset()
                break
        with torch.no_grad():
            _, last_v = act(torch.from_numpy(obs)[None], time_remaining(env))
        adv, ret = compute_gae(torch.tensor(ro.rewards), torch.tensor(ro.values), torch.tensor(ro.dones),
                               last_v[0], ro.num_steps)
        adv_means.append(adv.mean().item())
    return adv_means


if __name__ == "__main__":
    print(main())
