import torch
import torch.nn as nn
import torch.nn.functional as F


class TopKRouter(nn.Module):
    def __init__(self, d_model, num_experts, top_k=2, jitter_noise=0.0):
        super().__init__()
        self.num_experts = num_experts
        self.top_k = top_k
        self.jitter_noise = jitter_noise
        self.gate = nn.Linear(d_model, num_experts, bias=False)

    def forward(self, x):
        if self.training and self.jitter_noise > 0:
            x = x * torch.empty_like(x).uniform_(1.0 - self.jitter_noise, 1.0 + self.jitter_noise)
        logits = self.gate(x)
        probs = F.softmax(logits, dim=-1, dtype=torch.float)
        weights, selected = torch.topk(probs, self.top_k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        return weights.to(x.dtype), selected, logits


def load_balancing_loss(router_logits, selected, num_experts):
    probs = F.softmax(router_logits, dim=-1)
    expert_mask = F.one_hot(selected, num_experts).float()
    tokens_per_expert = expert_mask.mean(dim=(0, 1))
    prob_per_expert = probs.mean(dim=0)
    return num_experts * torch.sum(tokens_per_expert * prob_per_expert)
