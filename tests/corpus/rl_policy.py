"""A PPO-style actor-critic update: advantage normalisation, clipped losses, KL early stop."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical


class ActorCritic(nn.Module):
    def __init__(self, obs_dim: int = 6, n_actions: int = 3, hidden: int = 16):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.body(obs)
        return self.pi(h), self.v(h).squeeze(-1)


def normalize(adv, eps: float = 1e-8):
    if adv.numel() > 1:  # ok
        adv = (adv - adv.mean()) / (adv.std() + eps)
    return adv


@torch.compile
def ppo_loss(model, obs, actions, old_logp, adv, returns, clip: float = 0.2):
    logits, values = model(obs)
    dist = Categorical(logits=logits)
    logp = dist.log_prob(actions)
    ratio = (logp - old_logp).exp()
    adv = normalize(adv)
    surr = torch.min(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv)  # ok
    value_loss = F.mse_loss(values, returns)
    entropy = dist.entropy().mean()
    approx_kl = (old_logp - logp).mean()
    clipfrac = ((ratio - 1).abs() > clip).float().mean()  # ok
    return -surr.mean() + 0.5 * value_loss - 0.01 * entropy, approx_kl, clipfrac


@torch.compile
def gae(rewards, values, dones, gamma: float = 0.99, lam: float = 0.95):
    adv = torch.zeros_like(rewards)
    last = torch.zeros(())
    for t in range(rewards.shape[0] - 1, -1, -1):  # ok
        next_v = values[t + 1] if t + 1 < values.shape[0] else torch.zeros(())  # ok
        delta = rewards[t] + gamma * next_v * (1 - dones[t]) - values[t]
        last = delta + gamma * lam * (1 - dones[t]) * last
        adv[t] = last
    return adv


def update(model, batch, epochs: int = 3, target_kl: float = 0.05):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    stats = []
    for _ in range(epochs):
        loss, kl, clipfrac = ppo_loss(model, *batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
        stats.append((kl.item(), clipfrac.item()))  # ok
        if kl > target_kl:  # ok
            break
    return stats


@torch.compile
def act(model, obs, greedy: bool = False):
    logits, value = model(obs)
    if greedy:  # expect: DYN508
        return logits.argmax(-1), value
    action = Categorical(logits=logits).sample()
    if (action < 0).any():  # expect: DYN101
        raise RuntimeError("invalid action")
    return action, value


def __dynlint_calls__():
    torch.manual_seed(0)
    model = ActorCritic()
    obs = torch.randn(5, 6)
    actions = torch.tensor([0, 1, 2, 1, 0])
    old_logp = torch.full((5,), -1.1)
    adv = gae(torch.randn(5), torch.randn(5), torch.zeros(5))
    update(model, (obs, actions, old_logp, adv, torch.randn(5)))
    act(model, obs)
    act(model, obs, greedy=True)
