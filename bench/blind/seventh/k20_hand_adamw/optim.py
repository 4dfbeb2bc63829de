import math

import torch


def _adamw_update(params, grads, exp_avgs, exp_avg_sqs, lr, beta1, beta2, eps, weight_decay, step):
    bias_c1 = 1 - beta1 ** step
    bias_c2 = 1 - beta2 ** step
    step_size = lr / bias_c1
    for p, g, m, v in zip(params, grads, exp_avgs, exp_avg_sqs):
        p.mul_(1 - lr * weight_decay)
        m.lerp_(g, 1 - beta1)
        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        denom = (v.sqrt() / math.sqrt(bias_c2)).add_(eps)
        p.addcdiv_(m, denom, value=-step_size)


_compiled_update = torch.compile(_adamw_update)


class HandAdamW:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        self.param_groups = []
        self.state = {}
        self.defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
        self.add_param_group({"params": list(params)})

    def add_param_group(self, group):
        for k, v in self.defaults.items():
            group.setdefault(k, v)
        for p in group["params"]:
            self.state[p] = {"step": 0, "exp_avg": torch.zeros_like(p), "exp_avg_sq": torch.zeros_like(p)}
        self.param_groups.append(group)

    def zero_grad(self):
        for group in self.param_groups:
            for p in group["params"]:
                p.grad = None

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            ps = [p for p in group["params"] if p.grad is not None]
            if not ps:
                continue
            for p in ps:
                self.state[p]["step"] += 1
            beta1, beta2 = group["betas"]
            _compiled_update(ps, [p.grad for p in ps], [self.state[p]["exp_avg"] for p in ps],
                             [self.state[p]["exp_avg_sq"] for p in ps], group["lr"], beta1, beta2,
                             group["eps"], group["weight_decay"], self.state[ps[0]]["step"])
