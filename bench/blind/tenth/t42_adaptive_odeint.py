"""torchdiffeq-style neural ODE with an adaptive Bogacki-Shampine (RK23) solver written in Python."""
import torch
import torch.nn as nn


class ODEFunc(nn.Module):
    def __init__(self, dim=4, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.Tanh(), nn.Linear(hidden, dim))

    def forward(self, t, y):
        return self.net(y) * torch.cos(t)


def _rms_norm(x):
    return x.pow(2).mean().sqrt()


def rk23_step(func, t, y, dt, f0):
    k1 = f0
    k2 = func(t + dt / 2, y + dt * k1 / 2)
    k3 = func(t + 3 * dt / 4, y + 3 * dt * k2 / 4)
    y1 = y + dt * (2 * k1 + 3 * k2 + 4 * k3) / 9
    k4 = func(t + dt, y1)
    y1_err = dt * (-5 * k1 / 72 + k2 / 12 + k3 / 9 - k4 / 8)
    return y1, y1_err, k4


def odeint_adaptive(func, y0, t0, t1, rtol=1e-3, atol=1e-5, first_step=0.05, safety=0.9):
    t, y = t0, y0
    dt = torch.as_tensor(first_step)
    f0 = func(t, y)
    n_accepted = 0
    while t < t1:
        dt = torch.minimum(dt, t1 - t)
        y_new, err, f_new = rk23_step(func, t, y, dt, f0)
        tol = atol + rtol * torch.maximum(y.abs(), y_new.abs())
        error_ratio = _rms_norm(err / tol)
        if error_ratio <= 1:
            t, y, f0 = t + dt, y_new, f_new
            n_accepted += 1
        dfactor = torch.clamp(safety * error_ratio ** -0.33, 0.2, 5.0)
        dt = dt * dfactor
    return y, n_accepted


class ODEBlock(nn.Module):
    def __init__(self, func, t1=1.0):
        super().__init__()
        self.func = func
        self.register_buffer("t0", torch.tensor(0.0))
        self.register_buffer("t1", torch.tensor(t1))

    def forward(self, y0):
        y1, _ = odeint_adaptive(self.func, y0, self.t0, self.t1)
        return y1


def main():
    torch.manual_seed(0)
    block = ODEBlock(ODEFunc())
    compiled = torch.compile(block)
    with torch.no_grad():
        for _ in range(3):
            y = compiled(torch.randn(8, 4))
            assert y.shape == (8, 4)


if __name__ == "__main__":
    main()
