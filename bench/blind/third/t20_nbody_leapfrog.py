"""Gravitational N-body integration with a leapfrog step, adaptive time step and energy-drift monitoring."""
import torch

G = 1.0


def accelerations(pos, mass, softening):
    diff = pos[None, :, :] - pos[:, None, :]
    dist2 = (diff ** 2).sum(-1) + softening ** 2
    inv_r3 = dist2.pow(-1.5)
    inv_r3.fill_diagonal_(0.0)
    return G * (diff * (inv_r3 * mass[None, :])[..., None]).sum(1)


def total_energy(pos, vel, mass, softening):
    kinetic = 0.5 * (mass * (vel ** 2).sum(-1)).sum()
    diff = pos[None] - pos[:, None]
    r = ((diff ** 2).sum(-1) + softening ** 2).sqrt()
    pot = -G * (mass[:, None] * mass[None, :] / r).triu(1).sum()
    return kinetic + pot


@torch.compile(backend="eager")
def leapfrog(pos, vel, mass, dt, softening=0.05):
    acc = accelerations(pos, mass, softening)
    vel = vel + 0.5 * dt * acc
    pos = pos + dt * vel
    acc = accelerations(pos, mass, softening)
    vel = vel + 0.5 * dt * acc
    return pos, vel


def simulate(pos, vel, mass, t_end, dt_max=0.01, eta=0.02, softening=0.05):
    t = 0.0
    e0 = total_energy(pos, vel, mass, softening).item()
    n_steps = 0
    while t < t_end:
        a = accelerations(pos, mass, softening).norm(dim=-1).max()
        dt = min(dt_max, eta * float(a.rsqrt()), t_end - t)
        pos, vel = leapfrog(pos, vel, mass, dt, softening)
        t += dt
        n_steps += 1
    drift = abs(total_energy(pos, vel, mass, softening).item() - e0) / abs(e0)
    print(f"steps={n_steps} energy drift={drift:.2e}")
    return pos, vel


def main():
    torch.manual_seed(0)
    for n in (8, 8):
        pos = torch.randn(n, 3)
        vel = torch.randn(n, 3) * 0.1
        mass = torch.rand(n) + 0.5
        simulate(pos, vel, mass, t_end=0.03)
