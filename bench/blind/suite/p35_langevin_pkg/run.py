import torch
import torch.nn as nn

from .chains import NoiseStream, annealed_scales, langevin_chain


class EnergyNet(nn.Module):
    def __init__(self, d=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, 16), nn.SiLU(), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def run_chain(energy, x0, n_steps):
    samples = []
    for x in langevin_chain(energy, x0, n_steps, 0.01):
        samples.append(x)
    return torch.stack(samples)


def annealed_denoise(x, score_fn, n_levels):
    for sigma in annealed_scales(n_levels):
        x = x + sigma * score_fn(x)
    return x


def perturb(x, noise):
    return x + 0.1 * next(noise)


def main():
    torch.manual_seed(0)
    energy = EnergyNet()
    chain = torch.compile(run_chain, backend="eager")
    chain(energy, torch.randn(4, 2), 2)
    chain(energy, torch.randn(4, 2), 2)

    den = torch.compile(annealed_denoise, backend="eager")
    score = nn.Linear(2, 2)
    den(torch.randn(4, 2), score, 3)
    den(torch.randn(4, 2), score, 5)

    noise = NoiseStream((4, 2))
    pt = torch.compile(perturb, backend="eager")
    pt(torch.randn(4, 2), noise)
    pt(torch.randn(4, 2), noise)
