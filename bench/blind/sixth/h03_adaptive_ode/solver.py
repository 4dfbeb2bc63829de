import torch

from .config import SOLVER

# Bogacki-Shampine 3(2) tableau
_C = (0.0, 0.5, 0.75, 1.0)
_B3 = (2 / 9, 1 / 3, 4 / 9, 0.0)
_B2 = (7 / 24, 1 / 4, 1 / 3, 1 / 8)


def bs32_step(f, t, y, h):
    k1 = f(t, y)
    k2 = f(t + _C[1] * h, y + h * 0.5 * k1)
    k3 = f(t + _C[2] * h, y + h * 0.75 * k2)
    y3 = y + h * (_B3[0] * k1 + _B3[1] * k2 + _B3[2] * k3)
    k4 = f(t + h, y3)
    y2 = y + h * (_B2[0] * k1 + _B2[1] * k2 + _B2[2] * k3 + _B2[3] * k4)
    return y3, y3 - y2


def error_norm(err, y0, y1):
    scale = SOLVER.atol + SOLVER.rtol * torch.maximum(y0.abs(), y1.abs())
    return (err / scale).pow(2).mean().sqrt()


def odeint_adaptive(f, y0, t0, t1, h0=0.1):
    t, y, h = t0, y0, h0
    n_accepted = 0
    for _ in range(SOLVER.max_steps):
        if t >= t1:
            break
        h = min(h, t1 - t)
        y_new, err = bs32_step(f, t, y, h)
        enorm = error_norm(err, y, y_new)
        if enorm <= 1.0:
            t = t + h
            y = y_new
            n_accepted += 1
        factor = SOLVER.safety * enorm.clamp(min=1e-10) ** (-1 / 3)
        h = h * float(factor.clamp(SOLVER.min_factor, SOLVER.max_factor))
    return y, n_accepted
