"""Mixture-of-experts routing: top-k gating with per-expert dispatch, load statistics, switch routing."""
import torch
import torch.nn as nn


class Expert(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x):
        return self.ff(x)


class MoE(nn.Module):
    def __init__(self, d=8, n_experts=4, k=2):
        super().__init__()
        self.gate = nn.Linear(d, n_experts)
        self.experts = nn.ModuleList([Expert(d) for _ in range(n_experts)])
        self.k = k
        self.register_buffer("load", torch.zeros(n_experts))

    def forward(self, x):
        probs = self.gate(x).softmax(-1)
        weights, idx = probs.topk(self.k, dim=-1)
        weights = weights / weights.sum(-1, keepdim=True)
        self.load += torch.bincount(idx.flatten(), minlength=len(self.experts)).float()
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            tok, slot = torch.where(idx == e)
            if tok.numel() == 0:
                continue
            out[tok] += weights[tok, slot, None] * expert(x[tok])
        return out


class SwitchLayer(nn.Module):
    def __init__(self, d=8, n_experts=3):
        super().__init__()
        self.router = nn.Linear(d, n_experts)
        self.experts = nn.ModuleList([Expert(d) for _ in range(n_experts)])

    def forward(self, x):
        choice = self.router(x.mean(0)).argmax()
        expert = self.experts[int(choice)]
        return expert(x)


def aux_balance_loss(probs, idx, n_experts):
    frac_tokens = torch.zeros(n_experts).scatter_add_(0, idx[:, 0], torch.ones(idx.shape[0])) / idx.shape[0]
    frac_probs = probs.mean(0)
    return n_experts * (frac_tokens * frac_probs).sum()


def main():
    torch.manual_seed(0)
    moe = MoE()
    moe.compile(backend="eager")
    moe(torch.randn(6, 8))
    moe(torch.randn(10, 8))

    sw = SwitchLayer()
    sw.compile(backend="eager")
    sw(torch.randn(5, 8))
    sw(torch.randn(5, 8) + 3)

    aux = torch.compile(aux_balance_loss, backend="eager")
    p = torch.randn(6, 4).softmax(-1)
    aux(p, p.topk(2).indices, 4)
    p = torch.randn(9, 4).softmax(-1)
    aux(p, p.topk(2).indices, 4)
