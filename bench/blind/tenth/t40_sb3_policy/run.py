import numpy as np
import torch
import torch.nn.functional as F

from .policies import ActorCriticPolicy


class RolloutBuffer:
    def __init__(self, buffer_size, obs_dim, n_envs, gamma=0.99, gae_lambda=0.95):
        self.buffer_size, self.n_envs = buffer_size, n_envs
        self.gamma, self.gae_lambda = gamma, gae_lambda
        self.observations = np.zeros((buffer_size, n_envs, obs_dim), dtype=np.float32)
        self.actions = np.zeros((buffer_size, n_envs), dtype=np.int64)
        self.rewards = np.zeros((buffer_size, n_envs), dtype=np.float32)
        self.episode_starts = np.zeros((buffer_size, n_envs), dtype=np.float32)
        self.values = np.zeros((buffer_size, n_envs), dtype=np.float32)
        self.pos, self.full = 0, False

    def add(self, obs, action, reward, episode_start, value):
        self.observations[self.pos] = obs
        self.actions[self.pos] = action
        self.rewards[self.pos] = reward
        self.episode_starts[self.pos] = episode_start
        self.values[self.pos] = value.flatten()
        self.pos += 1
        self.full = self.pos == self.buffer_size

    def compute_returns_and_advantage(self, last_values, dones):
        last_values = last_values.flatten()
        self.advantages = np.zeros_like(self.rewards)
        last_gae_lam = 0
        for step in reversed(range(self.buffer_size)):
            if step == self.buffer_size - 1:
                next_non_terminal, next_values = 1.0 - dones, last_values
            else:
                next_non_terminal, next_values = 1.0 - self.episode_starts[step + 1], self.values[step + 1]
            delta = self.rewards[step] + self.gamma * next_values * next_non_terminal - self.values[step]
            last_gae_lam = delta + self.gamma * self.gae_lambda * next_non_terminal * last_gae_lam
            self.advantages[step] = last_gae_lam
        self.returns = self.advantages + self.values


def main():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    n_envs, obs_dim, n_steps = 2, 6, 4
    policy = ActorCriticPolicy(obs_dim, {"type": "discrete", "n": 3})
    forward = torch.compile(policy)
    evaluate = torch.compile(policy.evaluate_actions)
    predict = torch.compile(policy.predict)
    opt = torch.optim.Adam(policy.parameters(), lr=7e-4)
    for update in range(2):
        buf = RolloutBuffer(n_steps, obs_dim, n_envs)
        obs, starts = rng.standard_normal((n_envs, obs_dim)).astype(np.float32), np.ones(n_envs, dtype=np.float32)
        policy.set_training_mode(False)
        while not buf.full:
            with torch.no_grad():
                actions, values, _ = forward(torch.as_tensor(obs))
            rewards = rng.standard_normal(n_envs).astype(np.float32)
            buf.add(obs, actions.numpy(), rewards, starts, values.numpy())
            obs, starts = rng.standard_normal((n_envs, obs_dim)).astype(np.float32), np.zeros(n_envs, dtype=np.float32)
        with torch.no_grad():
            _, last_values, _ = forward(torch.as_tensor(obs))
        buf.compute_returns_and_advantage(last_values.numpy(), np.zeros(n_envs, dtype=np.float32))
        policy.set_training_mode(True)
        values, log_prob, entropy = evaluate(torch.as_tensor(buf.observations.reshape(-1, obs_dim)),
                                             torch.as_tensor(buf.actions.reshape(-1)))
        adv = torch.as_tensor(buf.advantages.reshape(-1))
        loss = -(adv * log_prob).mean() + 0.5 * F.mse_loss(values.flatten(), torch.as_tensor(buf.returns.reshape(-1))) \
            - 0.01 * entropy.mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    for det in (True, False, True):
        act = predict(rng.standard_normal(obs_dim).astype(np.float32), deterministic=det)
        assert act.shape == ()
