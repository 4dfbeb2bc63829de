"""Minimal selective state-space (Mamba-style) block with a sequential scan and a streaming step."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class SelectiveSSM(nn.Module):
    def __init__(self, d_model=16, d_state=8, expand=2, d_conv=4):
        super().__init__()
        d_inner = expand * d_model
        self.d_inner, self.d_state, self.d_conv = d_inner, d_state, d_conv
        self.in_proj = nn.Linear(d_model, 2 * d_inner)
        self.conv = nn.Conv1d(d_inner, d_inner, d_conv, groups=d_inner, padding=d_conv - 1)
        self.x_proj = nn.Linear(d_inner, 1 + 2 * d_state)
        self.dt_proj = nn.Linear(1, d_inner)
        A = torch.arange(1, d_state + 1).float().repeat(d_inner, 1)
        self.A_log = nn.Parameter(torch.log(A))
        self.D = nn.Parameter(torch.ones(d_inner))
        self.out_proj = nn.Linear(d_inner, d_model)

    def ssm_params(self, x):
        dbc = self.x_proj(x)
        dt, B, C = dbc.split([1, self.d_state, self.d_state], dim=-1)
        dt = F.softplus(self.dt_proj(dt))
        return dt, B, C

    def scan(self, x, dt, B, C, h=None):
        # x, dt: (b, l, d); B, C: (b, l, n)
        A = -torch.exp(self.A_log)
        b, L, d = x.shape
        if h is None:
            h = x.new_zeros(b, d, self.d_state)
        ys = []
        for t in range(L):
            dA = torch.exp(dt[:, t, :, None] * A)
            dBx = dt[:, t, :, None] * B[:, t, None, :] * x[:, t, :, None]
            h = dA * h + dBx
            ys.append((h * C[:, t, None, :]).sum(-1))
        return torch.stack(ys, dim=1), h

    def forward(self, u, state=None):
        L = u.shape[1]
        xz = self.in_proj(u)
        x, z = xz.chunk(2, dim=-1)
        x = self.conv(x.transpose(1, 2))[..., :L].transpose(1, 2)
        x = F.silu(x)
        dt, B, C = self.ssm_params(x)
        y, h = self.scan(x, dt, B, C, state)
        y = y + x * self.D
        return self.out_proj(y * F.silu(z)), h


class SSMLM(nn.Module):
    def __init__(self, vocab=32, d_model=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, d_model)
        self.ssm = SelectiveSSM(d_model)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, ids, state=None):
        y, h = self.ssm(self.emb(ids), state)
        return self.head(self.norm(y)), h


def main():
    torch.manual_seed(0)
    model = SSMLM()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    fwd = torch.compile(model)
    # bucketed sequence lengths from the data loader
    for L in (12, 12, 16):
        ids = torch.randint(0, 32, (4, L + 1))
        logits, _ = fwd(ids[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, 32), ids[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    # chunked prefill: carry the state across chunks
    with torch.no_grad():
        prompt = torch.randint(0, 32, (1, 16))
        state = None
        for chunk in prompt.split(8, dim=1):
            logits, state = fwd(chunk, state)
    return logits.shape, state.shape, math.isfinite(loss.item())
