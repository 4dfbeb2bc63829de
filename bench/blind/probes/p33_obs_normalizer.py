"""RL observation/reward normalisation with numpy running stats, inside a compiled policy forward."""
import json
import sys

import numpy as np
import torch
import torch.nn as nn


class RunningMeanStd:
    def __init__(self, shape, epsilon=1e-4):
        self.mean = np.zeros(shape, dtype=np.float64)
        self.var = np.ones(shape, dtype=np.float64)
        self.count = epsilon

    def update(self, x):
        batch_mean, batch_var, batch_count = np.mean(x, axis=0), np.var(x, axis=0), x.shape[0]
        delta = batch_mean - self.mean
        tot = self.count + batch_count
        self.mean = self.mean + delta * batch_count / tot
        m2 = self.var * self.count + batch_var * batch_count + delta ** 2 * self.count * batch_count / tot
        self.var = m2 / tot
        self.count = tot


class GaussianPolicy(nn.Module):
    def __init__(self, obs_dim=5, act_dim=2, clip_obs=10.0):
        super().__init__()
        self.obs_rms = RunningMeanStd(obs_dim)
        self.clip_obs = clip_obs
        self.mu = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, act_dim))
        self.log_std = nn.Parameter(torch.zeros(act_dim))
        self.debug = False

    def normalize(self, obs, update=True):
        obs_np = obs.detach().cpu().numpy()
        if update:
            self.obs_rms.update(obs_np)
        normed = np.clip((obs_np - self.obs_rms.mean) / np.sqrt(self.obs_rms.var + 1e-8), -self.clip_obs, self.clip_obs)
        return torch.as_tensor(normed, dtype=torch.float32)

    def forward(self, obs, deterministic=False):
        x = self.normalize(obs, update=self.training)
        mu = self.mu(x)
        if deterministic:
            return mu
        std = self.log_std.exp().expand_as(mu)
        act = mu + std * torch.randn_like(mu)
        if self.debug:
            sys.stdout.write(json.dumps({"mu": mu.mean().item(), "std": std.mean().item()}) + "\n")
        return act


def main():
    torch.manual_seed(0)
    np.random.seed(0)
    pi = GaussianPolicy()
    pi_c = torch.compile(pi)
    acts = []
    for t in range(3):
        pi.debug = t == 2
        acts.append(pi_c(torch.randn(4, 5)))
    pi.eval()
    acts.append(pi_c(torch.randn(4, 5), deterministic=True))
    return [a.shape for a in acts]


if __name__ == "__main__":
    print(main())
