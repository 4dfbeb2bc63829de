"""WGAN on 2-D toy data: weight clipping done inside the critic's forward, feature stats kept via setattr."""
import random

import numpy as np
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, z_dim=4, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, 2))

    def forward(self, z):
        return self.net(z)


class Critic(nn.Module):
    def __init__(self, hidden=32, clip_value=0.01, track_features=True):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(2, hidden), nn.Linear(hidden, hidden)])
        self.out = nn.Linear(hidden, 1)
        self.clip_value = clip_value
        self.track_features = track_features

    def clip_weights(self):
        for p in self.parameters():
            p.data.clamp_(-self.clip_value, self.clip_value)

    def forward(self, x):
        if self.training:
            self.clip_weights()
        h = x
        for i, layer in enumerate(self.layers):
            h = torch.relu(layer(h))
            if self.track_features:
                setattr(self, f"feat_mean_{i}", h.detach().mean(0))
        return self.out(h)


def sample_ring(n, rng, k=8, r=2.0, std=0.05):
    angles = rng.randint(0, k, size=n) * (2 * np.pi / k)
    pts = np.stack([r * np.cos(angles), r * np.sin(angles)], axis=1) + std * rng.randn(n, 2)
    return torch.from_numpy(pts.astype(np.float32))


def main():
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    rng = np.random.RandomState(0)
    G, D = Generator(), Critic()
    G_c, D_c = torch.compile(G), torch.compile(D)
    opt_g = torch.optim.RMSprop(G.parameters(), lr=5e-5)
    opt_d = torch.optim.RMSprop(D.parameters(), lr=5e-5)
    n_critic = 3
    for it in range(3):
        for _ in range(n_critic):
            real = sample_ring(32, rng)
            fake = G_c(torch.randn(32, 4)).detach()
            loss_d = D_c(fake).mean() - D_c(real).mean()
            opt_d.zero_grad()
            loss_d.backward()
            opt_d.step()
        loss_g = -D_c(G_c(torch.randn(32, 4))).mean()
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()
    return loss_d.item(), loss_g.item()


if __name__ == "__main__":
    print(main())
