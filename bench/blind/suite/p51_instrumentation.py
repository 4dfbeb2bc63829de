"""Instrumented training code: timing scopes, profiler ranges, checked losses, debug descriptions, caches."""
import contextlib
import dataclasses
import time

import torch
import torch.nn as nn

TIMINGS = {}


@contextlib.contextmanager
def timed(name):
    start = time.perf_counter()
    yield
    TIMINGS[name] = time.perf_counter() - start


class Regressor(nn.Module):
    def __init__(self, d=6):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        with torch.profiler.record_function("regressor.body"):
            out = self.body(x)
        return out.squeeze(-1)


def checked_loss(pred, target):
    loss = nn.functional.smooth_l1_loss(pred, target)
    assert torch.isfinite(loss), f"loss became non-finite: {loss}"
    return loss


def timed_forward(model, x):
    with timed("forward"):
        y = model(x)
    return y


def describe_batch(x):
    summary = repr(x.mean(0))
    return x - x.mean(0), summary


def step_output(pred, target):
    @dataclasses.dataclass
    class StepOutput:
        loss: torch.Tensor
        n: int

    return StepOutput((pred - target).abs().mean(), pred.shape[0])


def keep_confident(preds):
    kept = [p for p in preds if p.abs().max() > 0.5]
    return torch.stack(kept) if kept else preds[0].unsqueeze(0)


def main():
    torch.manual_seed(0)
    model = Regressor()
    model.compile(backend="eager")
    model(torch.randn(4, 6))
    model(torch.randn(4, 6))

    cl = torch.compile(checked_loss, backend="eager")
    cl(torch.randn(4), torch.randn(4))
    cl(torch.randn(4), torch.randn(4))

    tf = torch.compile(timed_forward, backend="eager")
    tf(model, torch.randn(4, 6))
    tf(model, torch.randn(4, 6))

    db = torch.compile(describe_batch, backend="eager")
    db(torch.randn(3, 2))
    db(torch.randn(3, 2))

    so = torch.compile(step_output, backend="eager")
    so(torch.randn(4), torch.randn(4))
    so(torch.randn(4), torch.randn(4))

    kc = torch.compile(keep_confident, backend="eager")
    kc([torch.randn(3) for _ in range(3)])
    kc([torch.randn(3) for _ in range(3)])
