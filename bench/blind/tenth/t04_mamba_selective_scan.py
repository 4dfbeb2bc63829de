"""Mamba-like block with a reference selective scan written as a Python loop over time."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def selective_scan_ref(u, delta, A, B, C, D, delta_bias):
    """u, delta: (b, d, l); A: (d, n); B, C: (b, n, l); D: (d,)."""
    delta = F.softplus(delta + delta_bias[..., None])
    batch, dim, seqlen = u.shape
    deltaA = torch.exp(torch.einsum("bdl,dn->bdln", delta, A))
    deltaB_u = torch.einsum("bdl,bnl,bdl->bdln", delta, B, u)
    x = A.new_zeros((batch, dim, A.shape[1]))
    ys = []
    for i in range(seqlen):
        x = deltaA[:, :, i] * x + deltaB_u[:, :, i]
        ys.append(torch.einsum("bdn,bn->bd", x, C[:, :, i]))
    y = torch.stack(ys, dim=2)
    return y + u * D[None, :, None]


class MambaBlock(nn.Module):
    def __init__(self, d_model, d_state=8, d_conv=4, expand=2):
        super().__init__()
        self.d_inner = expand * d_model
        self.d_state = d_state
        self.dt_rank = math.ceil(d_model / 16)
        self.in_proj = nn.Linear(d_model, 2 * self.d_inner, bias=False)
        self.conv1d = nn.Conv1d(self.d_inner, self.d_inner, d_conv, groups=self.d_inner, padding=d_conv - 1)
        self.x_proj = nn.Linear(self.d_inner, self.dt_rank + 2 * d_state, bias=False)
        self.dt_proj = nn.Linear(self.dt_rank, self.d_inner)
        A = torch.arange(1, d_state + 1, dtype=torch.float32).repeat(self.d_inner, 1)
        self.A_log = nn.Parameter(torch.log(A))
        self.D = nn.Parameter(torch.ones(self.d_inner))
        self.out_proj = nn.Linear(self.d_inner, d_model, bias=False)

    def forward(self, hidden_states):
        _, seqlen, _ = hidden_states.shape
        xz = self.in_proj(hidden_states).transpose(1, 2)
        x, z = xz.chunk(2, dim=1)
        x = F.silu(self.conv1d(x)[..., :seqlen])
        x_dbl = self.x_proj(x.transpose(1, 2))
        dt, B, C = torch.split(x_dbl, [self.dt_rank, self.d_state, self.d_state], dim=-1)
        dt = self.dt_proj.weight @ dt.transpose(1, 2)
        A = -torch.exp(self.A_log.float())
        y = selective_scan_ref(x, dt, A, B.transpose(1, 2), C.transpose(1, 2), self.D.float(),
                               self.dt_proj.bias.float())
        y = y * F.silu(z)
        return self.out_proj(y.transpose(1, 2))


class MixerModel(nn.Module):
    def __init__(self, vocab=100, d_model=32, n_layer=2):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d_model)
        self.layers = nn.ModuleList([MambaBlock(d_model) for _ in range(n_layer)])
        self.norms = nn.ModuleList([nn.LayerNorm(d_model) for _ in range(n_layer)])
        self.norm_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)
        self.lm_head.weight = self.embedding.weight

    def forward(self, input_ids):
        h = self.embedding(input_ids)
        for norm, layer in zip(self.norms, self.layers):
            h = h + layer(norm(h))
        return self.lm_head(self.norm_f(h))


def main():
    torch.manual_seed(0)
    model = MixerModel()
    compiled = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    for _ in range(3):
        ids = torch.randint(0, 100, (2, 12))
        logits = compiled(ids[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, 100), ids[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
