import torch


def langevin_chain(energy_fn, x, n_steps, step_size):
    for _ in range(n_steps):
        x = x.detach().requires_grad_(True)
        e = energy_fn(x).sum()
        (g,) = torch.autograd.grad(e, x)
        x = x - 0.5 * step_size * g + step_size ** 0.5 * torch.randn_like(x)
        yield x.detach()


def annealed_scales(n, start=1.0, end=0.01):
    ratio = (end / start) ** (1.0 / max(n - 1, 1))
    s = start
    for _ in range(n):
        yield s
        s *= ratio


class NoiseStream:
    def __init__(self, shape, seed=0):
        self.gen = torch.Generator().manual_seed(seed)
        self.shape = shape
        self.count = 0

    def __iter__(self):
        return self

    def __next__(self):
        self.count += 1
        return torch.randn(self.shape, generator=self.gen)
