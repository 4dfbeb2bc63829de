"""Sparse mixture-of-experts FFN: top-k gating, per-expert token dispatch, load-balancing aux loss, routing stats."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Expert(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden)
        self.w2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.w2(F.gelu(self.w1(x)))


class SparseMoE(nn.Module):
    def __init__(self, dim=16, hidden=32, num_experts=4, top_k=2, jitter=0.01):
        super().__init__()
        self.num_experts = num_experts
        self.top_k = top_k
        self.jitter = jitter
        self.gate = nn.Linear(dim, num_experts, bias=False)
        self.experts = nn.ModuleList(Expert(dim, hidden) for _ in range(num_experts))
        self.expert_counts = torch.zeros(num_experts)
        self.aux_loss = None

    def forward(self, x):
        b, s, d = x.shape
        tokens = x.reshape(-1, d)
        logits = self.gate(tokens)
        if self.training and self.jitter > 0:
            logits = logits + torch.randn_like(logits) * self.jitter
        probs = logits.softmax(-1)
        weights, selected = probs.topk(self.top_k, dim=-1)
        weights = weights / weights.sum(-1, keepdim=True)
        out = torch.zeros_like(tokens)
        expert_mask = F.one_hot(selected, self.num_experts).permute(2, 1, 0)
        for e, expert in enumerate(self.experts):
            slot, token_idx = torch.where(expert_mask[e])
            if token_idx.numel() == 0:
                continue
            y = expert(tokens[token_idx]) * weights[token_idx, slot, None]
            out.index_add_(0, token_idx, y)
        density = expert_mask.sum(dim=(1, 2)).float() / tokens.shape[0]
        self.aux_loss = self.num_experts * (density * probs.mean(0)).sum()
        self.expert_counts += expert_mask.sum(dim=(1, 2)).float()
        return out.reshape(b, s, d)


class Block(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.moe = SparseMoE(dim)

    def forward(self, x):
        return x + self.moe(self.norm(x))


def main():
    torch.manual_seed(0)
    block = Block()
    block.compile(backend="eager")
    opt = torch.optim.Adam(block.parameters(), lr=1e-3)
    for seq in (8, 8, 12):
        x = torch.randn(2, seq, 16)
        y = block(x)
        loss = y.pow(2).mean() + 0.01 * block.moe.aux_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    block.eval()
    with torch.no_grad():
        block(torch.randn(1, 8, 16))
