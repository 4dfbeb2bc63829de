"""Synchronous A2C rollout collection with episode statistics tracked in module-level state."""
import torch
import torch.nn as nn

EPISODES_DONE = 0
EPISODE_RETURNS = []


class Policy(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 16), nn.ReLU(), nn.Linear(16, n_actions + 1))

    def forward(self, obs):
        out = self.net(obs)
        return out[..., :-1], out[..., -1]


class VecEnv:
    def __init__(self, n, obs_dim, horizon=4):
        self.n, self.obs_dim, self.horizon = n, obs_dim, horizon
        self.t = torch.zeros(n, dtype=torch.long)

    def reset(self):
        self.t.zero_()
        return torch.randn(self.n, self.obs_dim)

    def step(self, actions):
        self.t += 1
        done = self.t >= self.horizon
        self.t[done] = 0
        reward = (actions == 0).float()
        return torch.randn(self.n, self.obs_dim), reward, done


@torch.compile(backend="eager")
def policy_step(policy, obs, ep_return, reward, done):
    global EPISODES_DONE
    logits, value = policy(obs)
    action = torch.distributions.Categorical(logits=logits).sample()
    ep_return = ep_return + reward
    if done.any():
        finished = ep_return[done]
        EPISODES_DONE += int(done.sum())
        EPISODE_RETURNS.extend(finished.tolist())
        ep_return = ep_return.masked_fill(done, 0.0)
    return action, value, ep_return


def collect(policy, env, n_steps):
    obs = env.reset()
    ep_return = torch.zeros(env.n)
    reward = torch.zeros(env.n)
    done = torch.zeros(env.n, dtype=torch.bool)
    values = []
    for _ in range(n_steps):
        action, value, ep_return = policy_step(policy, obs, ep_return, reward, done)
        obs, reward, done = env.step(action)
        values.append(value)
    return torch.stack(values)


def main():
    torch.manual_seed(0)
    policy = Policy(5, 2)
    with torch.no_grad():
        collect(policy, VecEnv(3, 5), 6)
        collect(policy, VecEnv(3, 5), 6)
    return EPISODES_DONE, sum(EPISODE_RETURNS) / max(len(EPISODE_RETURNS), 1)
