"""2-D particle system with soft-sphere collisions, adaptive time stepping and an emitter."""
from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class SimParams:
    radius: float = 0.05
    stiffness: float = 200.0
    gravity: float = -9.8
    cfl: float = 0.4
    max_dt: float = 0.01


def pair_forces(pos: torch.Tensor, radius: float, stiffness: float) -> torch.Tensor:
    diff = pos[:, None, :] - pos[None, :, :]
    dist = diff.norm(dim=-1) + torch.eye(pos.shape[0]) * 1e3
    overlap = (2 * radius - dist).clamp(min=0)
    return (stiffness * overlap / dist)[..., None].mul(diff).sum(dim=1)


@torch.compile
def integrate(pos: torch.Tensor, vel: torch.Tensor, p: SimParams, dt: float, substeps: int):
    h = dt / substeps
    g = torch.tensor([0.0, p.gravity])
    for _ in range(substeps):
        acc = pair_forces(pos, p.radius, p.stiffness) + g
        vel = vel + h * acc
        pos = pos + h * vel
        below = pos[:, 1] < 0
        vel = torch.where(below[:, None], vel * torch.tensor([0.8, -0.5]), vel)
        pos = torch.where(below[:, None], pos * torch.tensor([1.0, 0.0]), pos)
    return pos, vel


def choose_dt(vel: torch.Tensor, p: SimParams) -> float:
    vmax = vel.norm(dim=-1).max().item()
    return min(p.max_dt, p.cfl * p.radius / max(vmax, 1e-6))


def emit(pos: torch.Tensor, vel: torch.Tensor, n: int):
    new_pos = torch.rand(n, 2) * torch.tensor([1.0, 0.2]) + torch.tensor([0.0, 1.0])
    new_vel = torch.randn(n, 2) * 0.1
    return torch.cat([pos, new_pos]), torch.cat([vel, new_vel])


def main() -> None:
    torch.manual_seed(0)
    params = SimParams()
    pos, vel = emit(torch.empty(0, 2), torch.empty(0, 2), 16)
    for frame in range(6):
        dt = choose_dt(vel, params)
        substeps = 2 if dt < params.max_dt else 1
        pos, vel = integrate(pos, vel, params, dt, substeps)
        if frame % 2 == 1:
            pos, vel = emit(pos, vel, 4)
        print(frame, pos.shape[0], round(dt, 5), substeps)


if __name__ == "__main__":
    main()
