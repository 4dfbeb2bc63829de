import torch
import torch.nn as nn

from .gating import TopKGate


class Experts(nn.Module):
    def __init__(self, dim, hidden, num_experts):
        super().__init__()
        self.deepspeed_experts = nn.ModuleList(
            [nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim)) for _ in range(num_experts)])

    def forward(self, inputs):
        chunks = inputs.chunk(len(self.deepspeed_experts), dim=0)
        outs = [expert(chunk) for chunk, expert in zip(chunks, self.deepspeed_experts)]
        return torch.cat(outs, dim=0)


class MOELayer(nn.Module):
    def __init__(self, gate: TopKGate, experts: Experts, num_local_experts):
        super().__init__()
        self.gate = gate
        self.experts = experts
        self.num_local_experts = num_local_experts
        self.exp_counts = None
        self.l_aux = None

    def forward(self, hidden_states):
        d_model = hidden_states.shape[-1]
        reshaped_input = hidden_states.reshape(-1, d_model)
        self.l_aux, combine_weights, dispatch_mask, self.exp_counts = self.gate(reshaped_input)
        dispatched_input = torch.einsum("sec,sm->ecm", dispatch_mask.type_as(hidden_states), reshaped_input)
        e, c, m = dispatched_input.shape
        expert_output = self.experts(dispatched_input.reshape(e * c, m)).reshape(e, c, m)
        combined_output = torch.einsum("sec,ecm->sm", combine_weights.type_as(hidden_states), expert_output)
        return combined_output.reshape(hidden_states.shape)
