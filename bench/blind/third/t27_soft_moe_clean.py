"""Soft mixture-of-experts layer (slot-based dispatch/combine with einsum), fully dense and shape-static."""
import torch
import torch.nn as nn


class SoftMoE(nn.Module):
    def __init__(self, dim, num_experts=4, slots_per_expert=2, hidden=32):
        super().__init__()
        self.num_experts = num_experts
        self.slots = slots_per_expert
        self.phi = nn.Parameter(torch.randn(dim, num_experts * slots_per_expert) * dim ** -0.5)
        self.w1 = nn.Parameter(torch.randn(num_experts, dim, hidden) * dim ** -0.5)
        self.w2 = nn.Parameter(torch.randn(num_experts, hidden, dim) * hidden ** -0.5)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        x = self.norm(x)
        logits = torch.einsum("bnd,ds->bns", x, self.phi)
        dispatch = logits.softmax(dim=1)
        combine = logits.softmax(dim=2)
        slots = torch.einsum("bns,bnd->bsd", dispatch, x)
        slots = slots.reshape(x.shape[0], self.num_experts, self.slots, -1)
        h = torch.einsum("besd,edh->besh", slots, self.w1).relu()
        y = torch.einsum("besh,ehd->besd", h, self.w2)
        y = y.reshape(x.shape[0], self.num_experts * self.slots, -1)
        return torch.einsum("bns,bsd->bnd", combine, y)


class Model(nn.Module):
    def __init__(self, vocab=50, dim=16, depth=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(SoftMoE(dim) for _ in range(depth))
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        h = self.embed(tokens)
        for layer in self.layers:
            h = h + layer(h)
        return self.head(h)


def main():
    torch.manual_seed(0)
    model = Model()
    compiled = torch.compile(model, backend="eager")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for _ in range(3):
        tokens = torch.randint(0, 50, (4, 10))
        logits = compiled(tokens[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, 50), tokens[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
