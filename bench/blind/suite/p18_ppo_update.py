"""Policy-gradient training: a PPO update step compiled as a whole, with early stopping on KL."""
import torch
import torch.nn as nn
from torch.distributions import Categorical


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=6, n_actions=3):
        super().__init__()
        self.pi = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, n_actions))
        self.v = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, obs):
        return Categorical(logits=self.pi(obs)), self.v(obs).squeeze(-1)


def gae(rewards, values, dones, gamma=0.99, lam=0.95):
    adv = torch.zeros_like(rewards)
    last = torch.zeros(())
    for t in reversed(range(rewards.shape[0])):
        nxt = values[t + 1] if t + 1 < rewards.shape[0] else torch.zeros(())
        delta = rewards[t] + gamma * nxt * (1 - dones[t]) - values[t]
        last = delta + gamma * lam * (1 - dones[t]) * last
        adv[t] = last
    return adv


class PPO:
    def __init__(self, model, clip=0.2, target_kl=0.02):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=3e-4)
        self.clip = clip
        self.target_kl = target_kl
        self.stats = {}

    def update(self, obs, actions, old_logp, adv, returns):
        dist, value = self.model(obs)
        logp = dist.log_prob(actions)
        ratio = (logp - old_logp).exp()
        approx_kl = (old_logp - logp).mean()
        if approx_kl > 1.5 * self.target_kl:
            return None
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        pg = -torch.min(ratio * adv, ratio.clamp(1 - self.clip, 1 + self.clip) * adv).mean()
        vf = (returns - value).pow(2).mean()
        loss = pg + 0.5 * vf - 0.01 * dist.entropy().mean()
        self.opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.model.parameters(), 0.5)
        self.opt.step()
        self.stats["loss"] = loss.item()
        return loss.detach()


def main():
    torch.manual_seed(0)
    ppo = PPO(ActorCritic())
    adv_fn = torch.compile(gae, backend="eager")
    adv = adv_fn(torch.randn(6), torch.randn(6), torch.zeros(6))
    adv_fn(torch.randn(6), torch.randn(6), torch.tensor([0.0, 0, 1, 0, 0, 1]))

    upd = torch.compile(ppo.update, backend="eager")
    obs = torch.randn(6, 6)
    with torch.no_grad():
        d, _ = ppo.model(obs)
        a = d.sample()
        old = d.log_prob(a)
    upd(obs, a, old, adv, torch.randn(6))
    upd(obs, a, old, adv, torch.randn(6))
