"""Softened gravitational N-body integration with a kick-drift-kick leapfrog."""
import math

import torch

G = 1.0
SOFTENING = 0.05
DT = 0.01


def accelerations(pos, mass):
    # pairwise displacement r_j - r_i, shape (N, N, 3)
    diff = pos[None, :, :] - pos[:, None, :]
    dist2 = (diff ** 2).sum(-1) + SOFTENING ** 2
    inv_r3 = dist2.pow(-1.5)
    inv_r3 = inv_r3 * (1 - torch.eye(pos.shape[0], dtype=pos.dtype))
    return G * (diff * (inv_r3 * mass[None, :])[..., None]).sum(1)


@torch.compile
def leapfrog(pos, vel, mass, n_substeps: int = 4):
    assert pos.shape == vel.shape and pos.shape[-1] == 3
    acc = accelerations(pos, mass)
    for _ in range(n_substeps):
        vel = vel + 0.5 * DT * acc
        pos = pos + DT * vel
        acc = accelerations(pos, mass)
        vel = vel + 0.5 * DT * acc
    return pos, vel


def total_energy(pos, vel, mass):
    kinetic = 0.5 * (mass[:, None] * vel ** 2).sum()
    diff = pos[None] - pos[:, None]
    r = torch.sqrt((diff ** 2).sum(-1) + SOFTENING ** 2)
    iu = torch.triu_indices(len(mass), len(mass), 1)
    potential = -(G * mass[iu[0]] * mass[iu[1]] / r[iu[0], iu[1]]).sum()
    return kinetic + potential


def plummer_sphere(n, gen, scale=1.0):
    u = torch.rand(n, generator=gen).clamp(1e-3, 0.99)
    r = scale / torch.sqrt(u.pow(-2.0 / 3.0) - 1)
    direction = torch.nn.functional.normalize(torch.randn(n, 3, generator=gen), dim=-1)
    pos = r[:, None] * direction
    vel = 0.1 * torch.randn(n, 3, generator=gen)
    mass = torch.full((n,), 1.0 / n)
    return pos, vel - vel.mean(0), mass


def main():
    gen = torch.Generator().manual_seed(0)
    pos, vel, mass = plummer_sphere(32, gen)
    e0 = total_energy(pos, vel, mass)
    energies = []
    for _ in range(10):
        pos, vel = leapfrog(pos, vel, mass)
        energies.append(total_energy(pos, vel, mass))
    drift = abs(float(energies[-1] - e0) / float(e0))
    assert math.isfinite(drift)
    return drift
