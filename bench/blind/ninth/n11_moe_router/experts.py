import torch
import torch.nn as nn
import torch.nn.functional as F

from .router import TopKRouter, load_balancing_loss


class SwiGLUExpert(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.w1 = nn.Linear(d_model, d_ff, bias=False)
        self.w3 = nn.Linear(d_model, d_ff, bias=False)
        self.w2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class SparseMoeBlock(nn.Module):
    def __init__(self, d_model=16, d_ff=32, num_experts=4, top_k=2):
        super().__init__()
        self.num_experts = num_experts
        self.router = TopKRouter(d_model, num_experts, top_k, jitter_noise=0.01)
        self.experts = nn.ModuleList([SwiGLUExpert(d_model, d_ff) for _ in range(num_experts)])

    def forward(self, hidden_states):
        bsz, seq_len, d = hidden_states.shape
        x = hidden_states.view(-1, d)
        weights, selected, router_logits = self.router(x)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            token_idx, slot = torch.where(selected == e)
            if token_idx.numel() == 0:
                continue
            out.index_add_(0, token_idx, expert(x[token_idx]) * weights[token_idx, slot, None])
        aux = load_balancing_loss(router_logits, selected, self.num_experts)
        return out.view(bsz, seq_len, d), aux


class MoETransformerLayer(nn.Module):
    def __init__(self, d_model=16, n_heads=2):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.moe = SparseMoeBlock(d_model)

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        m, aux = self.moe(self.ln2(x))
        return x + m, aux
