import torch
import torch.nn as nn
from torch.distributions import Categorical


def layer_init(layer, std=2 ** 0.5):
    nn.init.orthogonal_(layer.weight, std)
    nn.init.zeros_(layer.bias)
    return layer


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=32):
        super().__init__()
        self.critic = nn.Sequential(layer_init(nn.Linear(obs_dim, hidden)), nn.Tanh(),
                                    layer_init(nn.Linear(hidden, 1), std=1.0))
        self.actor = nn.Sequential(layer_init(nn.Linear(obs_dim, hidden)), nn.Tanh(),
                                   layer_init(nn.Linear(hidden, n_actions), std=0.01))

    def value(self, obs):
        return self.critic(obs).squeeze(-1)

    def act(self, obs, deterministic=False):
        logits = self.actor(obs)
        if deterministic:
            action = logits.argmax(-1)
        else:
            action = Categorical(logits=logits).sample()
        logp = torch.log_softmax(logits, -1).gather(-1, action[..., None]).squeeze(-1)
        return action, logp, self.value(obs)

    def evaluate(self, obs, action):
        logits = self.actor(obs)
        logp_all = torch.log_softmax(logits, -1)
        logp = logp_all.gather(-1, action[..., None]).squeeze(-1)
        entropy = -(logp_all.exp() * logp_all).sum(-1)
        return logp, entropy, self.value(obs)
