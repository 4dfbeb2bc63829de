"""Sparse MoE layer: loop over experts, gather the tokens routed to each (Mixtral-like)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from .gating import TopKGate


class Expert(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class SparseMoE(nn.Module):
    def __init__(self, dim=16, hidden=32, num_experts=4, k=2):
        super().__init__()
        self.gate = TopKGate(dim, num_experts, k)
        self.experts = nn.ModuleList([Expert(dim, hidden) for _ in range(num_experts)])
        self.aux_loss = None
        self.expert_counts = [0] * num_experts

    def forward(self, hidden_states):
        b, t, d = hidden_states.shape
        x = hidden_states.reshape(-1, d)
        weights, selected, aux = self.gate(x)
        self.aux_loss = aux
        out = torch.zeros_like(x)
        expert_mask = F.one_hot(selected, len(self.experts)).permute(2, 1, 0)
        for e, expert in enumerate(self.experts):
            slot, token = torch.where(expert_mask[e])
            if token.shape[0] == 0:
                continue
            self.expert_counts[e] += int(token.shape[0])
            y = expert(x[token]) * weights[token, slot, None]
            out.index_add_(0, token, y)
        return out.reshape(b, t, d)


class MoEBlock(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.moe = SparseMoE(dim)

    def forward(self, x):
        return x + self.moe(self.norm(x))


def main():
    torch.manual_seed(0)
    block = MoEBlock()
    block.train()
    block = torch.compile(block)
    for t in (6, 10):
        y = block(torch.randn(2, t, 16))
        loss = y.pow(2).mean() + 0.01 * block.moe.aux_loss
        loss.backward()
    return loss.item()
