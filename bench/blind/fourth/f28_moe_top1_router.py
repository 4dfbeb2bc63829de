import math
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


def load_balancing_loss(router_probs: torch.Tensor, expert_index: torch.Tensor, num_experts: int) -> torch.Tensor:
    expert_mask = F.one_hot(expert_index, num_experts).float()
    tokens_per_expert = expert_mask.mean(dim=0)
    router_prob_per_expert = router_probs.mean(dim=0)
    return num_experts * torch.sum(tokens_per_expert * router_prob_per_expert)


class ExpertFFN(nn.Module):
    def __init__(self, dim, hidden, activation=F.gelu):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden)
        self.w2 = nn.Linear(hidden, dim)
        self.activation = activation

    def forward(self, x):
        return self.w2(self.activation(self.w1(x)))


class SwitchMoE(nn.Module):
    def __init__(self, dim=32, hidden=64, num_experts=4, train_capacity_factor=1.25, eval_capacity_factor=2.0,
                 jitter_eps=0.01, aux_loss_coef=0.01):
        super().__init__()
        self.num_experts = num_experts
        self.router = nn.Linear(dim, num_experts, bias=False)
        self.experts = nn.ModuleList([ExpertFFN(dim, hidden) for _ in range(num_experts)])
        self.train_capacity_factor = train_capacity_factor
        self.eval_capacity_factor = eval_capacity_factor
        self.capacity_factor = train_capacity_factor
        self.jitter_eps = jitter_eps
        self.aux_loss_coef = aux_loss_coef
        self.aux_loss = None

    def train(self, mode: bool = True):
        super().train(mode)
        self.capacity_factor = self.train_capacity_factor if mode else self.eval_capacity_factor
        return self

    def route(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        if self.training and self.jitter_eps > 0:
            x = x * torch.empty_like(x).uniform_(1.0 - self.jitter_eps, 1.0 + self.jitter_eps)
        logits = self.router(x)
        probs = logits.softmax(dim=-1)
        gate, expert_index = probs.max(dim=-1)
        return probs, gate, expert_index

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        batch, seq, dim = hidden_states.shape
        x = hidden_states.reshape(-1, dim)
        probs, gate, expert_index = self.route(x)
        capacity = math.ceil(self.capacity_factor * x.shape[0] / self.num_experts)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            token_idx = torch.nonzero(expert_index == e, as_tuple=True)[0][:capacity]
            if token_idx.numel() == 0:
                continue
            out[token_idx] = expert(x[token_idx]) * gate[token_idx, None]
        self.aux_loss = self.aux_loss_coef * load_balancing_loss(probs, expert_index, self.num_experts)
        return out.view(batch, seq, dim)


class MoETransformerLayer(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.moe = SwitchMoE(dim)

    def forward(self, x, attn_mask: Optional[torch.Tensor] = None):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, attn_mask=attn_mask, need_weights=False)[0]
        return x + self.moe(self.norm2(x))


def main():
    torch.manual_seed(0)
    layer = MoETransformerLayer()
    compiled = torch.compile(layer)
    optimizer = torch.optim.Adam(layer.parameters(), lr=1e-3)
    layer.train()
    for _ in range(3):
        x = torch.randn(2, 8, 32)
        out = compiled(x)
        loss = out.pow(2).mean() + layer.moe.aux_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss


if __name__ == "__main__":
    main()
