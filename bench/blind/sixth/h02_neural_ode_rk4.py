"""Neural ODE with fixed-step solvers, trained on a damped spiral."""
import torch
import torch.nn as nn


class ODEFunc(nn.Module):
    def __init__(self, dim=2, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim + 1, hidden), nn.Tanh(), nn.Linear(hidden, dim))
        self.nfe = 0

    def forward(self, t, y):
        self.nfe += 1
        tt = torch.ones_like(y[..., :1]) * t
        return self.net(torch.cat([y, tt], dim=-1))


def euler_step(f, t, y, dt):
    return y + dt * f(t, y)


def rk4_step(f, t, y, dt):
    k1 = f(t, y)
    k2 = f(t + dt / 2, y + dt * k1 / 2)
    k3 = f(t + dt / 2, y + dt * k2 / 2)
    k4 = f(t + dt, y + dt * k3)
    return y + dt * (k1 + 2 * k2 + 2 * k3 + k4) / 6


STEPPERS = {"euler": euler_step, "rk4": rk4_step}


def odeint_fixed(f, y0, t0, t1, n_steps, method="rk4"):
    step = STEPPERS[method]
    dt = (t1 - t0) / n_steps
    y, t = y0, t0
    traj = [y0]
    for _ in range(n_steps):
        y = step(f, t, y, dt)
        t = t + dt
        traj.append(y)
    if not torch.isfinite(y).all():
        raise RuntimeError(f"ODE solution diverged ({method}, dt={dt:.3g})")
    return torch.stack(traj, dim=0)


class NeuralODE(nn.Module):
    def __init__(self, func):
        super().__init__()
        self.func = func

    def forward(self, y0, t1=1.0, n_steps=10, method="rk4"):
        return odeint_fixed(self.func, y0, 0.0, t1, n_steps, method)


def spiral(n_points, t1):
    t = torch.linspace(0, t1, n_points)
    r = torch.exp(-0.3 * t)
    return torch.stack([r * torch.cos(2 * t), r * torch.sin(2 * t)], dim=-1)


def main():
    torch.manual_seed(0)
    model = NeuralODE(ODEFunc())
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    cmodel = torch.compile(model)

    # curriculum: integrate over a longer horizon as training goes on
    curriculum = [(1.0, 8), (1.0, 8), (2.0, 16), (3.0, 24)]
    y0 = torch.tensor([[1.0, 0.0]]).repeat(8, 1) + 0.01 * torch.randn(8, 2)
    for t1, n_steps in curriculum:
        target = spiral(n_steps + 1, t1).unsqueeze(1)
        pred = cmodel(y0, t1=t1, n_steps=n_steps)
        loss = (pred - target).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()

    # cheap preview with Euler
    with torch.no_grad():
        preview = cmodel(y0[:2], t1=1.0, n_steps=8, method="euler")
    return loss.detach(), preview
