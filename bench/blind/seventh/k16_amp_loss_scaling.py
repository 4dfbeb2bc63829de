"""Hand-written dynamic loss scaling with mixed precision switched on after a warmup epoch."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DynamicLossScaler:
    def __init__(self, init_scale=2.0 ** 10, growth_interval=2):
        self.scale = init_scale
        self.growth_interval = growth_interval
        self._good_steps = 0

    def update(self, found_inf):
        if found_inf:
            self.scale /= 2.0
            self._good_steps = 0
        else:
            self._good_steps += 1
            if self._good_steps % self.growth_interval == 0:
                self.scale *= 2.0


def scaled_loss(model, x, y, scale):
    logits = model(x)
    loss = F.cross_entropy(logits.float(), y)
    return loss * scale, loss.detach()


def unscale_and_check(params, scale):
    inv = 1.0 / scale
    grads = [p.grad for p in params if p.grad is not None]
    norms = []
    for g in grads:
        g.mul_(inv)
        norms.append(g.norm())
    total = torch.stack(norms).norm()
    if not torch.isfinite(total):
        return True, total
    return False, total


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4))
    params = list(model.parameters())
    opt = torch.optim.SGD(params, lr=0.01)
    scaler = DynamicLossScaler()
    loss_fn = torch.compile(scaled_loss)
    unscale = torch.compile(unscale_and_check)
    for epoch in range(2):
        use_amp = epoch > 0
        for _ in range(3):
            x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=use_amp):
                loss, raw = loss_fn(model, x, y, scaler.scale)
            opt.zero_grad()
            loss.backward()
            found_inf, norm = unscale(params, scaler.scale)
            if not found_inf:
                opt.step()
            scaler.update(found_inf)


if __name__ == "__main__":
    main()
