"""Top-k gating with capacity and load-balancing loss (GShard / Switch style)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class TopKGate(nn.Module):
    def __init__(self, dim, num_experts, k=2, capacity_factor=1.25, noise_std=1.0):
        super().__init__()
        self.w_gate = nn.Linear(dim, num_experts, bias=False)
        self.num_experts, self.k = num_experts, k
        self.capacity_factor = capacity_factor
        self.noise_std = noise_std

    def capacity(self, num_tokens):
        return max(4, math.ceil(self.k * num_tokens * self.capacity_factor / self.num_experts))

    def forward(self, x):
        logits = self.w_gate(x)
        if self.training and self.noise_std > 0:
            logits = logits + torch.randn_like(logits) * self.noise_std / self.num_experts
        probs = F.softmax(logits, dim=-1, dtype=torch.float32)
        topk_p, topk_i = probs.topk(self.k, dim=-1)
        topk_p = topk_p / topk_p.sum(-1, keepdim=True)
        # load-balancing auxiliary loss
        density = F.one_hot(topk_i[:, 0], self.num_experts).float().mean(0)
        aux = (density * probs.mean(0)).sum() * self.num_experts
        return topk_p.to(x.dtype), topk_i, aux
