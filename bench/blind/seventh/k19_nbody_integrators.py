"""Gravitational N-body simulation with pluggable integrators."""
import torch


def accelerations(pos, masses, softening=0.05):
    diff = pos[None, :, :] - pos[:, None, :]
    dist2 = (diff ** 2).sum(-1) + softening ** 2
    inv_d3 = dist2.pow(-1.5)
    inv_d3 = inv_d3 * (1 - torch.eye(pos.shape[0]))
    return (diff * (inv_d3 * masses[None, :])[..., None]).sum(1)


class Euler:
    def step(self, pos, vel, masses, dt):
        acc = accelerations(pos, masses)
        return pos + dt * vel, vel + dt * acc


class Leapfrog:
    def step(self, pos, vel, masses, dt):
        vel_half = vel + 0.5 * dt * accelerations(pos, masses)
        pos = pos + dt * vel_half
        return pos, vel_half + 0.5 * dt * accelerations(pos, masses)


def simulate(pos, vel, masses, integrator, dt, n_substeps):
    for _ in range(n_substeps):
        pos, vel = integrator.step(pos, vel, masses, dt)
    kinetic = 0.5 * (masses * (vel ** 2).sum(-1)).sum()
    return pos, vel, kinetic


def main():
    torch.manual_seed(0)
    n = 6
    pos0, vel0, masses = torch.randn(n, 3), 0.1 * torch.randn(n, 3), torch.rand(n) + 0.5
    sim = torch.compile(simulate)
    for integrator, dt, sub in [(Euler(), 0.01, 4), (Euler(), 0.01, 4), (Leapfrog(), 0.01, 4), (Leapfrog(), 0.02, 2)]:
        pos, vel = pos0.clone(), vel0.clone()
        for _ in range(2):
            pos, vel, ke = sim(pos, vel, masses, integrator, dt, sub)
        print(type(integrator).__name__, float(ke))


if __name__ == "__main__":
    main()
