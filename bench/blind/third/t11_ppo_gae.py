"""PPO bookkeeping: generalized advantage estimation over a rollout, advantage normalisation, clipped loss, diagnostics."""
import torch
import torch.nn as nn


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh())
        self.pi = nn.Linear(32, n_actions)
        self.v = nn.Linear(32, 1)

    def forward(self, obs):
        h = self.body(obs)
        return torch.distributions.Categorical(logits=self.pi(h)), self.v(h).squeeze(-1)


@torch.compile(backend="eager")
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


def ppo_loss(model, obs, actions, old_logp, advantages, returns, clip=0.2, vf_coef=0.5, ent_coef=0.01):
    if advantages.numel() > 1 and advantages.std() > 1e-8:
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    dist, values = model(obs)
    logp = dist.log_prob(actions)
    ratio = (logp - old_logp).exp()
    pg = -torch.min(ratio * advantages, ratio.clamp(1 - clip, 1 + clip) * advantages).mean()
    vf = (returns - values).pow(2).mean()
    ent = dist.entropy().mean()
    approx_kl = (old_logp - logp).mean().item()
    clipfrac = ((ratio - 1).abs() > clip).float().mean().item()
    return pg + vf_coef * vf - ent_coef * ent, {"kl": approx_kl, "clipfrac": clipfrac}


def main():
    torch.manual_seed(0)
    model = ActorCritic(6, 3)
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    loss_fn = torch.compile(ppo_loss, backend="eager")
    for n_envs in (4, 8):
        T = 5
        obs = torch.randn(T, n_envs, 6)
        with torch.no_grad():
            dist, values = model(obs)
            actions = dist.sample()
            old_logp = dist.log_prob(actions)
        rewards = torch.randn(T, n_envs)
        dones = (torch.rand(T, n_envs) < 0.1).float()
        adv, ret = compute_gae(rewards, values, dones, torch.zeros(n_envs))
        for epoch in range(2):
            loss, info = loss_fn(model, obs.flatten(0, 1), actions.flatten(), old_logp.flatten(),
                                 adv.flatten(), ret.flatten())
            opt.zero_grad()
            loss.backward()
            opt.step()
            if info["kl"] > 0.05:
                break
