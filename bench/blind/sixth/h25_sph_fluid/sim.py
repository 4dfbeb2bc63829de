from dataclasses import dataclass

import torch

from .kernels import poly6, spiky_grad, viscosity_lap


@dataclass
class SPHParams:
    h: float = 0.1
    rest_density: float = 1000.0
    stiffness: float = 3.0
    viscosity: float = 0.1
    mass: float = 0.02
    gravity: float = -9.8
    box: float = 1.0
    damping: float = 0.5
    cfl: float = 0.4


class SPHSolver:
    def __init__(self, params):
        self.p = params
        self.frame = 0

    def density_pressure(self, pos):
        diff = pos[:, None] - pos[None]
        r2 = (diff ** 2).sum(-1)
        rho = self.p.mass * poly6(r2, self.p.h).sum(1)
        pressure = self.p.stiffness * (rho - self.p.rest_density)
        return diff, r2, rho, pressure

    def forces(self, pos, vel):
        diff, r2, rho, pressure = self.density_pressure(pos)
        r = torch.sqrt(r2 + 1e-12)
        neighbours = (r2 < self.p.h ** 2) & (r2 > 0)
        pi, pj = neighbours.nonzero(as_tuple=True)
        shared = (pressure[pi] + pressure[pj]) / (2 * rho[pj])
        f_press = -self.p.mass * shared[:, None] * spiky_grad(diff[pi, pj], r[pi, pj], self.p.h)
        f_visc = self.p.viscosity * self.p.mass * ((vel[pj] - vel[pi]) / rho[pj, None]) * viscosity_lap(r[pi, pj], self.p.h)[:, None]
        f = torch.zeros_like(pos).index_add_(0, pi, f_press + f_visc)
        f[:, 1] += self.p.gravity * rho
        return f / rho[:, None]

    def enforce_boundaries(self, pos, vel):
        lo, hi = 0.0, self.p.box
        out_lo, out_hi = pos < lo, pos > hi
        vel = torch.where(out_lo | out_hi, -self.p.damping * vel, vel)
        pos = pos.clamp(lo, hi)
        return pos, vel

    def step(self, pos, vel, dt):
        acc = self.forces(pos, vel)
        vel = vel + dt * acc
        pos = pos + dt * vel
        pos, vel = self.enforce_boundaries(pos, vel)
        self.frame += 1
        return pos, vel

    def cfl_dt(self, vel, dt_max=2e-3):
        vmax = vel.norm(dim=-1).max().item()
        return min(dt_max, self.p.cfl * self.p.h / max(vmax, 1e-6))
