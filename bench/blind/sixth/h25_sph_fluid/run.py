import torch

from .sim import SPHParams, SPHSolver


def dam_break(n_side=6, spacing=0.05):
    g = torch.arange(n_side) * spacing + 0.05
    xx, yy = torch.meshgrid(g, g, indexing="ij")
    pos = torch.stack([xx.flatten(), yy.flatten()], -1)
    return pos, torch.zeros_like(pos)


def main():
    solver = SPHSolver(SPHParams())
    step = torch.compile(solver.step)
    pos, vel = dam_break()
    t, output_every, next_output = 0.0, 3e-3, 3e-3
    snapshots = []
    while solver.frame < 5:
        # shorten the step so we land exactly on the output times
        dt = min(solver.cfl_dt(vel), next_output - t)
        pos, vel = step(pos, vel, dt)
        t += dt
        if t >= next_output - 1e-9:
            snapshots.append(pos.clone())
            next_output += output_every
    return pos.mean(0), t, len(snapshots)
