import numpy as np
import torch
import torch.nn as nn

from .distributions import CategoricalDistribution, DiagGaussianDistribution


class MlpExtractor(nn.Module):
    def __init__(self, feature_dim, net_arch=dict(pi=[32, 32], vf=[32, 32]), activation_fn=nn.Tanh):
        super().__init__()
        def mlp(sizes):
            layers, last = [], feature_dim
            for s in sizes:
                layers += [nn.Linear(last, s), activation_fn()]
                last = s
            return nn.Sequential(*layers), last
        self.policy_net, self.latent_dim_pi = mlp(net_arch["pi"])
        self.value_net, self.latent_dim_vf = mlp(net_arch["vf"])

    def forward(self, features):
        return self.policy_net(features), self.value_net(features)


class ActorCriticPolicy(nn.Module):
    def __init__(self, obs_dim, action_space, normalize_images=False):
        super().__init__()
        self.obs_dim = obs_dim
        self.action_space = action_space
        self.normalize_images = normalize_images
        self.mlp_extractor = MlpExtractor(obs_dim)
        if action_space["type"] == "discrete":
            self.action_dist = CategoricalDistribution(action_space["n"])
            self.action_net = self.action_dist.proba_distribution_net(self.mlp_extractor.latent_dim_pi)
            self.log_std = None
        else:
            self.action_dist = DiagGaussianDistribution(action_space["shape"][0])
            self.action_net, self.log_std = self.action_dist.proba_distribution_net(self.mlp_extractor.latent_dim_pi)
        self.value_net = nn.Linear(self.mlp_extractor.latent_dim_vf, 1)

    def set_training_mode(self, mode):
        self.train(mode)

    def extract_features(self, obs):
        obs = obs.float()
        return obs / 255.0 if self.normalize_images else obs

    def _get_action_dist_from_latent(self, latent_pi):
        mean_actions = self.action_net(latent_pi)
        if self.log_std is None:
            return self.action_dist.proba_distribution(action_logits=mean_actions)
        return self.action_dist.proba_distribution(mean_actions, self.log_std)

    def forward(self, obs, deterministic=False):
        latent_pi, latent_vf = self.mlp_extractor(self.extract_features(obs))
        values = self.value_net(latent_vf)
        distribution = self._get_action_dist_from_latent(latent_pi)
        actions = distribution.get_actions(deterministic=deterministic)
        log_prob = distribution.log_prob(actions)
        return actions, values, log_prob

    def evaluate_actions(self, obs, actions):
        latent_pi, latent_vf = self.mlp_extractor(self.extract_features(obs))
        distribution = self._get_action_dist_from_latent(latent_pi)
        return self.value_net(latent_vf), distribution.log_prob(actions), distribution.entropy()

    def predict(self, observation, deterministic=False):
        self.set_training_mode(False)
        vectorized = observation.ndim > 1
        obs = torch.as_tensor(observation.reshape((-1, self.obs_dim)))
        with torch.no_grad():
            actions, _, _ = self.forward(obs, deterministic=deterministic)
        actions = actions.cpu().numpy()
        if self.action_space["type"] == "box":
            actions = np.clip(actions, self.action_space["low"], self.action_space["high"])
        return actions if vectorized else actions.squeeze(axis=0)
