from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical


@dataclass
class PPOArgs:
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    update_epochs: int = 2
    num_minibatches: int = 2
    norm_adv: bool = True
    clip_vloss: bool = True
    target_kl: float = 0.015
    anneal_lr: bool = True
    learning_rate: float = 2.5e-4


def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.critic = nn.Sequential(layer_init(nn.Linear(obs_dim, 32)), nn.Tanh(), layer_init(nn.Linear(32, 1), std=1.0))
        self.actor = nn.Sequential(layer_init(nn.Linear(obs_dim, 32)), nn.Tanh(), layer_init(nn.Linear(32, n_actions), std=0.01))

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None):
        logits = self.actor(x)
        probs = Categorical(logits=logits)
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


def compute_gae(rewards, values, dones, next_value, next_done, gamma, gae_lambda):
    num_steps = rewards.shape[0]
    advantages = torch.zeros_like(rewards)
    lastgaelam = 0
    for t in reversed(range(num_steps)):
        if t == num_steps - 1:
            nextnonterminal = 1.0 - next_done
            nextvalues = next_value
        else:
            nextnonterminal = 1.0 - dones[t + 1]
            nextvalues = values[t + 1]
        delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
        advantages[t] = lastgaelam = delta + gamma * gae_lambda * nextnonterminal * lastgaelam
    return advantages, advantages + values


@torch.compile
def ppo_minibatch_loss(agent, mb_obs, mb_actions, mb_logprobs, mb_advantages, mb_returns, mb_values, clip_coef: float, args: PPOArgs):
    _, newlogprob, entropy, newvalue = agent.get_action_and_value(mb_obs, mb_actions.long())
    logratio = newlogprob - mb_logprobs
    ratio = logratio.exp()
    with torch.no_grad():
        approx_kl = ((ratio - 1) - logratio).mean()
        clipfrac = ((ratio - 1.0).abs() > clip_coef).float().mean().item()

    if args.norm_adv:
        mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)

    pg_loss1 = -mb_advantages * ratio
    pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)
    pg_loss = torch.max(pg_loss1, pg_loss2).mean()

    newvalue = newvalue.view(-1)
    if args.clip_vloss:
        v_loss_unclipped = (newvalue - mb_returns) ** 2
        v_clipped = mb_values + torch.clamp(newvalue - mb_values, -clip_coef, clip_coef)
        v_loss_clipped = (v_clipped - mb_returns) ** 2
        v_loss = 0.5 * torch.max(v_loss_unclipped, v_loss_clipped).mean()
    else:
        v_loss = 0.5 * ((newvalue - mb_returns) ** 2).mean()

    entropy_loss = entropy.mean()
    loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef
    return loss, approx_kl, clipfrac


def main():
    torch.manual_seed(0)
    np.random.seed(0)
    args = PPOArgs()
    obs_dim, n_actions, num_steps = 4, 2, 16
    agent = Agent(obs_dim, n_actions)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    num_updates = 2
    for update in range(1, num_updates + 1):
        frac = 1.0 - (update - 1.0) / num_updates
        clip_coef = args.clip_coef * frac
        obs = torch.randn(num_steps, obs_dim)
        with torch.no_grad():
            actions, logprobs, _, values = agent.get_action_and_value(obs)
        values = values.flatten()
        rewards = torch.rand(num_steps)
        dones = (torch.rand(num_steps) < 0.1).float()
        advantages, returns = compute_gae(rewards, values, dones, values[-1], dones[-1], args.gamma, args.gae_lambda)
        batch_size = num_steps
        minibatch_size = batch_size // args.num_minibatches
        b_inds = np.arange(batch_size)
        for epoch in range(args.update_epochs):
            np.random.shuffle(b_inds)
            for start in range(0, batch_size, minibatch_size):
                mb_inds = torch.from_numpy(b_inds[start : start + minibatch_size])
                loss, approx_kl, clipfrac = ppo_minibatch_loss(
                    agent, obs[mb_inds], actions[mb_inds], logprobs[mb_inds], advantages[mb_inds], returns[mb_inds],
                    values[mb_inds], clip_coef, args)
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
            if args.target_kl is not None and approx_kl > args.target_kl:
                break


if __name__ == "__main__":
    main()
