"""Optimizer-side helpers: foreach EMA of weights with warmup-adjusted decay, and non-finite-safe gradient clipping."""
import torch
import torch.nn as nn


@torch.no_grad()
def ema_update_(ema_params, params, step, decay=0.999, warmup_power=0.75):
    d = min(decay, 1 - (1 + step) ** -warmup_power)
    torch._foreach_lerp_(ema_params, params, 1 - d)


def clip_gradients_(parameters, max_norm, error_if_nonfinite=False):
    grads = [p.grad for p in parameters if p.grad is not None]
    norms = torch.stack([g.detach().norm(2) for g in grads])
    total_norm = norms.norm(2)
    if not torch.isfinite(total_norm):
        if error_if_nonfinite:
            raise RuntimeError("non-finite gradient norm")
        for g in grads:
            g.zero_()
        return total_norm
    clip_coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
    torch._foreach_mul_(grads, clip_coef)
    return total_norm


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.GELU(), nn.Linear(32, 1))
    ema_params = [p.detach().clone() for p in model.parameters()]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ema_step = torch.compile(ema_update_, backend="eager")
    clip = torch.compile(clip_gradients_, backend="eager")
    params = list(model.parameters())
    for step in range(4):
        x, y = torch.randn(16, 10), torch.randn(16, 1)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        if step == 2:
            params[0].grad[0, 0] = float("nan")
        clip(params, 1.0)
        opt.step()
        ema_step(ema_params, [p.detach() for p in params], step)
