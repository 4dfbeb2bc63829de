import collections
import random

import torch

from .agent import DQNAgent


class ToyEnv:
    def __init__(self, obs_dim=4, n_envs=2):
        self.obs_dim, self.n_envs = obs_dim, n_envs

    def reset(self):
        return torch.randn(self.n_envs, self.obs_dim)

    def step(self, actions):
        obs = torch.randn(self.n_envs, self.obs_dim)
        reward = (actions == 1).float()
        done = (torch.rand(self.n_envs) < 0.1).float()
        return obs, reward, done


def linear_epsilon(step, start=1.0, end=0.05, decay_steps=20):
    frac = min(step / decay_steps, 1.0)
    return start + frac * (end - start)


def main():
    random.seed(0)
    torch.manual_seed(0)
    env = ToyEnv()
    agent = DQNAgent(obs_dim=4, n_actions=3)
    buffer = collections.deque(maxlen=200)
    obs = env.reset()
    for step in range(6):
        eps = linear_epsilon(step)
        actions = agent.act(obs, eps)
        next_obs, reward, done = env.step(actions)
        for i in range(obs.shape[0]):
            buffer.append((obs[i], actions[i], reward[i], next_obs[i], done[i]))
        obs = next_obs
        if len(buffer) >= 8:
            sample = random.sample(list(buffer), 8)
            batch = [torch.stack(col) for col in zip(*sample)]
            agent.learn(batch)
