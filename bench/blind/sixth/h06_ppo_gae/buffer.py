import torch


class RolloutBuffer:
    def __init__(self, n_steps, n_envs, obs_dim):
        self.n_steps, self.n_envs = n_steps, n_envs
        self.obs = torch.zeros(n_steps, n_envs, obs_dim)
        self.actions = torch.zeros(n_steps, n_envs, dtype=torch.long)
        self.logprobs = torch.zeros(n_steps, n_envs)
        self.rewards = torch.zeros(n_steps, n_envs)
        self.dones = torch.zeros(n_steps, n_envs)
        self.values = torch.zeros(n_steps, n_envs)
        self.pos = 0

    def add(self, obs, action, logprob, reward, done, value):
        self.obs[self.pos] = obs
        self.actions[self.pos] = action
        self.logprobs[self.pos] = logprob
        self.rewards[self.pos] = reward
        self.dones[self.pos] = done
        self.values[self.pos] = value
        self.pos += 1

    def reset(self):
        self.pos = 0

    def minibatches(self, advantages, returns, batch_size, gen):
        n = self.n_steps * self.n_envs
        perm = torch.randperm(n, generator=gen)
        flat = lambda t: t.reshape(n, *t.shape[2:])
        obs, act, logp = flat(self.obs), flat(self.actions), flat(self.logprobs)
        adv, ret = flat(advantages), flat(returns)
        for start in range(0, n, batch_size):
            idx = perm[start:start + batch_size]
            yield obs[idx], act[idx], logp[idx], adv[idx], ret[idx]


@torch.compile
def compute_gae(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    T = rewards.shape[0]
    advantages = torch.zeros_like(rewards)
    last_gae = torch.zeros_like(last_value)
    for t in reversed(range(T)):
        next_value = last_value if t == T - 1 else values[t + 1]
        not_done = 1.0 - dones[t]
        delta = rewards[t] + gamma * next_value * not_done - values[t]
        last_gae = delta + gamma * lam * not_done * last_gae
        advantages[t] = last_gae
    return advantages, advantages + values
