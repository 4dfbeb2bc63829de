"""Device and backend utilities called from model code: device counts, seeding, memory stats, generators."""
import torch
import torch.nn as nn


def scale_for_world(x):
    n_dev = max(1, torch.cuda.device_count())
    return x / n_dev


def reseed_all(x, seed):
    torch.cuda.manual_seed_all(seed)
    return x + torch.randn_like(x)


def mem_guard(x):
    if torch.cuda.is_available() and torch.cuda.memory_allocated() > 2 ** 30:
        torch.cuda.empty_cache()
    return x * 2


class DeviceAwareNorm(nn.Module):
    def __init__(self, d=4):
        super().__init__()
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        if x.is_cuda:
            x = x.half()
        elif x.device.type == "cpu" and x.dtype != torch.float32:
            x = x.float()
        return self.norm(x)


def peak_memory_report(x):
    y = x @ x.t()
    peak = torch.cuda.max_memory_allocated()
    return y, peak


def generator_noise(x, gen):
    return x + torch.randn(x.shape, generator=gen)


def main():
    torch.manual_seed(0)
    f1 = torch.compile(scale_for_world, backend="eager")
    f1(torch.randn(3))
    f1(torch.randn(3))

    f2 = torch.compile(reseed_all, backend="eager")
    f2(torch.randn(3), 0)
    f2(torch.randn(3), 1)

    f3 = torch.compile(mem_guard, backend="eager")
    f3(torch.randn(3))
    f3(torch.randn(3))

    m = DeviceAwareNorm()
    m.compile(backend="eager")
    m(torch.randn(2, 4))
    m(torch.randn(2, 4).double())

    f4 = torch.compile(peak_memory_report, backend="eager")
    f4(torch.randn(2, 2))
    f4(torch.randn(2, 2))

    gen = torch.Generator().manual_seed(1)
    f5 = torch.compile(generator_noise, backend="eager")
    f5(torch.randn(3), gen)
    f5(torch.randn(3), gen)
