"""Top-k mixture-of-experts routing: a capacity-free router, an expert loop, and a grouped variant."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Router(nn.Module):
    def __init__(self, dim: int, n_experts: int, k: int = 2):
        super().__init__()
        self.gate = nn.Linear(dim, n_experts, bias=False)
        self.k = k
        self.n_experts = n_experts

    def forward(self, x):
        logits = self.gate(x)
        probs = logits.softmax(dim=-1)
        weights, experts = probs.topk(self.k, dim=-1)  # ok
        weights = weights / weights.sum(dim=-1, keepdim=True)
        # load-balancing loss: fraction routed times mean probability, all tensor ops
        counts = F.one_hot(experts[:, 0], self.n_experts).float().sum(0)  # ok
        aux = (counts / x.shape[0] * probs.mean(0)).sum() * self.n_experts
        return weights, experts, aux


class LoopMoE(nn.Module):
    """One expert at a time, dispatching the tokens routed to it (the common reference implementation)."""

    def __init__(self, dim: int, n_experts: int = 4):
        super().__init__()
        self.router = Router(dim, n_experts, k=1)
        self.experts = nn.ModuleList([nn.Linear(dim, dim) for _ in range(n_experts)])

    def forward(self, x):
        weights, experts, aux = self.router(x)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            idx = torch.nonzero(experts[:, 0] == e).squeeze(-1)  # expect: DYN401
            out[idx] = expert(x[idx]) * weights[idx]
        return out, aux


class GroupedMoE(nn.Module):
    """Sort tokens by expert and split them into per-expert groups."""

    def __init__(self, dim: int, n_experts: int = 4):
        super().__init__()
        self.router = Router(dim, n_experts, k=1)
        self.w = nn.Parameter(torch.randn(n_experts, dim, dim) * 0.02)
        self.n_experts = n_experts

    def forward(self, x):
        weights, experts, aux = self.router(x)
        order = experts[:, 0].argsort()
        counts = torch.bincount(experts[:, 0], minlength=self.n_experts)  # expect: DYN401
        if (counts == 0).any():  # expect: DYN101
            aux = aux + 0.01
        groups = x[order].split(counts.tolist())  # expect: DYN404
        outs = [g @ self.w[i] for i, g in enumerate(groups)]
        y = torch.cat(outs)[order.argsort()]
        return y * weights, aux


class DenseMoE(nn.Module):
    """Every expert sees every token; routing only weights the outputs (static shapes, one graph)."""

    def __init__(self, dim: int, n_experts: int = 4):
        super().__init__()
        self.router = Router(dim, n_experts, k=2)
        self.w = nn.Parameter(torch.randn(n_experts, dim, dim) * 0.02)

    def forward(self, x):
        weights, experts, aux = self.router(x)
        gates = torch.zeros(x.shape[0], self.w.shape[0], device=x.device, dtype=x.dtype)
        gates = gates.scatter(1, experts, weights)  # ok
        all_out = torch.einsum("td,edf->tef", x, self.w)
        y = (all_out * gates[:, :, None]).sum(1)
        return y, aux


def __dynlint_calls__():
    torch.manual_seed(0)
    x = torch.randn(12, 8)
    torch.compile(LoopMoE(8))(x)
    torch.compile(GroupedMoE(8))(x)
    torch.compile(DenseMoE(8))(x)
