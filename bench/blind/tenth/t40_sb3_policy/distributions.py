import torch
import torch.nn as nn
from torch.distributions import Categorical, Normal


class CategoricalDistribution:
    def __init__(self, action_dim):
        self.action_dim = action_dim
        self.distribution = None

    def proba_distribution_net(self, latent_dim):
        return nn.Linear(latent_dim, self.action_dim)

    def proba_distribution(self, action_logits):
        self.distribution = Categorical(logits=action_logits)
        return self

    def log_prob(self, actions):
        return self.distribution.log_prob(actions)

    def entropy(self):
        return self.distribution.entropy()

    def mode(self):
        return torch.argmax(self.distribution.probs, dim=1)

    def sample(self):
        return self.distribution.sample()

    def get_actions(self, deterministic=False):
        if deterministic:
            return self.mode()
        return self.sample()


class DiagGaussianDistribution(CategoricalDistribution):
    def proba_distribution_net(self, latent_dim, log_std_init=0.0):
        return nn.Linear(latent_dim, self.action_dim), nn.Parameter(torch.ones(self.action_dim) * log_std_init)

    def proba_distribution(self, mean_actions, log_std):
        self.distribution = Normal(mean_actions, torch.ones_like(mean_actions) * log_std.exp())
        return self

    def log_prob(self, actions):
        return self.distribution.log_prob(actions).sum(dim=1)

    def entropy(self):
        return self.distribution.entropy().sum(dim=1)

    def mode(self):
        return self.distribution.mean

    def sample(self):
        return self.distribution.rsample()
