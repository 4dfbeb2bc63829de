import math

import torch
import torch.nn as nn
import torch.nn.functional as F

uniform_map = {}
gumbel_map = {}


def multiplicative_jitter(x, epsilon=1e-2):
    if epsilon == 0:
        return x
    uniform = uniform_map.get(x.device)
    if uniform is None:
        uniform = torch.distributions.uniform.Uniform(
            low=torch.tensor(1.0 - epsilon, device=x.device), high=torch.tensor(1.0 + epsilon, device=x.device)).rsample
        uniform_map[x.device] = uniform
    return x * uniform(x.shape)


def _capacity(gates, capacity_factor, min_capacity):
    num_tokens, num_experts = gates.shape[0], gates.shape[1]
    capacity = math.ceil((num_tokens / num_experts) * capacity_factor)
    if capacity < min_capacity:
        capacity = min_capacity
    return capacity


def top1gating(logits, capacity_factor, min_capacity, noisy_gate_policy=None, drop_tokens=True, use_rts=True):
    if noisy_gate_policy == "RSample":
        logits_w_noise = logits + torch.randn_like(logits)
    gates = F.softmax(logits, dim=1)
    capacity = _capacity(gates, capacity_factor, min_capacity)
    indices1_s = torch.argmax(logits_w_noise if noisy_gate_policy == "RSample" else gates, dim=1)
    num_experts = int(gates.shape[1])
    mask1 = F.one_hot(indices1_s, num_classes=num_experts)
    exp_counts = torch.sum(mask1, dim=0).detach().to("cpu")
    if not drop_tokens:
        new_capacity = torch.max(exp_counts).to(logits.device)
        capacity = int(new_capacity)
    me = torch.mean(gates, dim=0)
    ce = torch.mean(mask1.float(), dim=0)
    l_aux = torch.sum(me * ce) * num_experts
    if use_rts:
        mask1_rand = mask1 * torch.rand_like(mask1, dtype=torch.float)
    else:
        mask1_rand = mask1.float()
    top_idx = torch.topk(mask1_rand, k=capacity, dim=0)[1]
    new_mask1 = mask1 * torch.zeros_like(mask1).scatter_(0, top_idx, 1)
    locations1 = torch.cumsum(new_mask1, dim=0) - 1
    locations1_s = torch.sum(locations1 * new_mask1, dim=1)
    gates = gates * new_mask1.float()
    locations1_sc = F.one_hot(locations1_s, num_classes=capacity).float()
    combine_weights = torch.einsum("se,sc->sec", gates, locations1_sc)
    dispatch_mask = combine_weights.bool()
    return l_aux, combine_weights, dispatch_mask, exp_counts


class TopKGate(nn.Module):
    def __init__(self, model_dim, num_experts, capacity_factor=1.0, eval_capacity_factor=2.0, min_capacity=4,
                 noisy_gate_policy=None, drop_tokens=True, use_rts=True):
        super().__init__()
        self.wg = nn.Linear(model_dim, num_experts, bias=False)
        self.capacity_factor = capacity_factor
        self.eval_capacity_factor = eval_capacity_factor
        self.min_capacity = min_capacity
        self.noisy_gate_policy = noisy_gate_policy
        self.drop_tokens = drop_tokens
        self.use_rts = use_rts

    def forward(self, input):
        input_fp32 = input.float()
        if self.noisy_gate_policy == "Jitter" and self.training:
            input_fp32 = multiplicative_jitter(input_fp32)
        logits = self.wg(input_fp32)
        factor = self.capacity_factor if self.training else self.eval_capacity_factor
        return top1gating(logits, factor, self.min_capacity,
                          self.noisy_gate_policy if self.training else None, self.drop_tokens, self.use_rts)
