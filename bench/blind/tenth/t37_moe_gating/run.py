import torch
import torch.nn as nn
import torch.nn.functional as F

from .experts import Experts, MOELayer
from .gating import TopKGate


class MoEBlock(nn.Module):
    def __init__(self, dim=32, num_experts=4, **gate_kwargs):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, 4, batch_first=True)
        self.ln2 = nn.LayerNorm(dim)
        self.moe = MOELayer(TopKGate(dim, num_experts, **gate_kwargs), Experts(dim, dim * 2, num_experts), num_experts)

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        x = x + self.moe(self.ln2(x))
        return x, self.moe.l_aux


def main():
    torch.manual_seed(0)
    block = MoEBlock(noisy_gate_policy="Jitter")
    head = nn.Linear(32, 10)
    step = torch.compile(block)
    opt = torch.optim.Adam(list(block.parameters()) + list(head.parameters()), lr=1e-3)
    for seq in (8, 8, 12):
        x, y = torch.randn(2, seq, 32), torch.randint(0, 10, (2,))
        out, l_aux = step(x)
        loss = F.cross_entropy(head(out.mean(1)), y) + 0.01 * l_aux
        opt.zero_grad()
        loss.backward()
        opt.step()
    block.eval()
    block.moe.gate.drop_tokens = False
    with torch.no_grad():
        step(torch.randn(2, 8, 32))
    assert block.moe.exp_counts.sum() == 16
