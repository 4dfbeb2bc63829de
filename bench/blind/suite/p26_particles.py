"""Physics simulation: explicit particle integration with floor collisions and an energy monitor."""
import warnings

import torch


class ParticleSystem:
    def __init__(self, n, max_energy=1e3):
        self.pos = torch.rand(n, 2) * 5
        self.vel = torch.randn(n, 2)
        self.max_energy = max_energy
        self.gravity = torch.tensor([0.0, -9.81])
        self.t = 0.0

    def step(self, dt):
        self.vel = self.vel + dt * self.gravity
        self.pos = self.pos + dt * self.vel
        below = (self.pos[:, 1] < 0).nonzero().squeeze(-1)
        self.pos[below, 1] = -self.pos[below, 1]
        self.vel[below, 1] = -0.8 * self.vel[below, 1]
        self.t += dt
        energy = float(0.5 * (self.vel ** 2).sum() + 9.81 * self.pos[:, 1].sum())
        if energy > self.max_energy:
            warnings.warn("energy blow-up")
        return energy


def integrate(pos, vel, dt, t_end):
    t = 0.0
    while t < t_end:
        vel = vel - dt * pos
        pos = pos + dt * vel
        t += dt
    return pos, vel


def pairwise_forces(pos, eps=1e-3):
    diff = pos[:, None, :] - pos[None, :, :]
    r2 = (diff ** 2).sum(-1) + eps
    inv = r2.pow(-1.5)
    inv = inv - torch.diag_embed(torch.diagonal(inv))
    return (diff * inv[..., None]).sum(1)


def main():
    torch.manual_seed(0)
    ps = ParticleSystem(16)
    step = torch.compile(ps.step, backend="eager")
    step(0.01)
    step(0.01)

    integ = torch.compile(integrate, backend="eager")
    integ(torch.randn(4), torch.zeros(4), 0.1, 0.3)
    integ(torch.randn(4), torch.zeros(4), 0.1, 0.5)

    forces = torch.compile(pairwise_forces, backend="eager")
    forces(torch.randn(8, 3))
    forces(torch.randn(10, 3))
