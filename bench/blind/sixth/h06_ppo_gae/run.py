import torch

from .agent import ActorCritic
from .buffer import RolloutBuffer, compute_gae


class ToyEnv:
    """Vectorised 'move to the origin' task with 4 discrete moves."""

    def __init__(self, n_envs, gen):
        self.n_envs, self.gen = n_envs, gen
        self.state = torch.randn(n_envs, 4, generator=gen)
        self.t = torch.zeros(n_envs)

    def step(self, action):
        moves = torch.eye(4)[action] * 0.1
        self.state = self.state - moves * self.state.sign()
        self.t += 1
        reward = -self.state.norm(dim=-1)
        done = (self.t >= 16).float()
        reset = done.bool()
        self.state[reset] = torch.randn(int(reset.sum()), 4, generator=self.gen)
        self.t[reset] = 0
        return self.state.clone(), reward, done


class PPO:
    def __init__(self, agent, lr=3e-4, clip=0.2, vf_coef=0.5, target_kl=0.05):
        self.agent = agent
        self.opt = torch.optim.Adam(agent.parameters(), lr=lr)
        self.clip, self.vf_coef, self.target_kl = clip, vf_coef, target_kl
        self.n_updates = 0
        self.clipfracs = []

    @torch.compile
    def loss(self, obs, act, old_logp, adv, ret, ent_coef):
        logp, entropy, value = self.agent.evaluate(obs, act)
        ratio = (logp - old_logp).exp()
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        pg = torch.max(-adv * ratio, -adv * ratio.clamp(1 - self.clip, 1 + self.clip)).mean()
        vf = 0.5 * (ret - value).pow(2).mean()
        approx_kl = ((ratio - 1) - (logp - old_logp)).mean()
        self.clipfracs.append(((ratio - 1.0).abs() > self.clip).float().mean().item())
        self.n_updates += 1
        return pg + self.vf_coef * vf - ent_coef * entropy.mean(), approx_kl

    def update(self, buf, adv, ret, ent_coef, gen, epochs=2, batch_size=32):
        for _ in range(epochs):
            for obs, act, logp, a, r in buf.minibatches(adv, ret, batch_size, gen):
                loss, kl = self.loss(obs, act, logp, a, r, ent_coef)
                self.opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.agent.parameters(), 0.5)
                self.opt.step()
                if kl > self.target_kl:
                    return


def main():
    gen = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    n_envs, n_steps = 4, 16
    env = ToyEnv(n_envs, gen)
    agent = ActorCritic(4, 4)
    ppo = PPO(agent)
    buf = RolloutBuffer(n_steps, n_envs, 4)
    act = torch.compile(agent.act)
    obs = env.state.clone()
    for it in range(3):
        buf.reset()
        with torch.no_grad():
            for _ in range(n_steps):
                a, logp, v = act(obs)
                nxt, r, d = env.step(a)
                buf.add(obs, a, logp, r, d, v)
                obs = nxt
            last_v = agent.value(obs)
        adv, ret = compute_gae(buf.rewards, buf.values, buf.dones, last_v)
        ent_coef = 0.01 * (1 - it / 3)
        ppo.update(buf, adv, ret, ent_coef, gen)
    # greedy evaluation episode
    with torch.no_grad():
        eval_obs = torch.randn(n_envs, 4, generator=gen)
        for _ in range(4):
            a, _, _ = act(eval_obs, deterministic=True)
            eval_obs, _, _ = env.step(a)
    return ppo.n_updates
