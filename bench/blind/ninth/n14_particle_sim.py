"""Position-based dynamics for soft particles in a box: compiled step with iterative collision projection."""
import random

import numpy as np
import torch


class ParticleSystem:
    def __init__(self, n=48, radius=0.05, box=1.0, gravity=(0.0, -9.81), damping=0.99, seed=0):
        rng = np.random.RandomState(seed)
        self.x = torch.from_numpy(rng.uniform(0.1, 0.9, size=(n, 2)).astype(np.float32))
        self.v = torch.zeros(n, 2)
        self.inv_mass = torch.ones(n)
        self.radius = radius
        self.box = box
        self.gravity = torch.tensor(gravity)
        self.damping = damping


def pairwise_penetration(x, radius):
    diff = x[:, None, :] - x[None, :, :]
    dist = diff.norm(dim=-1) + torch.eye(x.shape[0]) * 1e3
    pen = (2 * radius - dist).clamp(min=0.0)
    return diff, dist, pen


@torch.compile
def pbd_step(x, v, inv_mass, gravity, dt: float, radius: float, box: float, damping: float,
             max_iters: int = 8, tol: float = 1e-4):
    v = v + dt * gravity
    p = x + dt * v
    it = 0
    diff, dist, pen = pairwise_penetration(p, radius)
    while (pen > tol).any() and it < max_iters:
        w = inv_mass[:, None] / (inv_mass[:, None] + inv_mass[None, :])
        corr = (w * pen / dist)[..., None] * diff
        p = p + 0.5 * corr.sum(dim=1)
        diff, dist, pen = pairwise_penetration(p, radius)
        it += 1
    p = p.clamp(radius, box - radius)
    v = damping * (p - x) / dt
    return p, v


def kinetic_energy(v, inv_mass):
    return 0.5 * ((v ** 2).sum(-1) / inv_mass).sum()


def main():
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    sys_ = ParticleSystem()
    energies = []
    for frame in range(6):
        sys_.x, sys_.v = pbd_step(sys_.x, sys_.v, sys_.inv_mass, sys_.gravity, 1.0 / 60.0, sys_.radius,
                                  sys_.box, sys_.damping)
        energies.append(float(kinetic_energy(sys_.v, sys_.inv_mass)))
    return energies[-1]


if __name__ == "__main__":
    print(main())
