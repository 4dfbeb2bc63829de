"""Residual MLP trunk with activation checkpointing and stateless forward hooks (kept compile-clean)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class ResidualMLP(nn.Module):
    def __init__(self, dim, hidden, dropout=0.0):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        self.dropout = dropout

    def forward(self, x):
        h = F.gelu(self.fc1(self.norm(x)))
        h = F.dropout(h, self.dropout, self.training)
        return x + self.fc2(h)


def clamp_activation_hook(module, args, output):
    return output.clamp(-20.0, 20.0)


def scale_input_pre_hook(module, args):
    (x,) = args
    return (x * module.input_scale,)


class Trunk(nn.Module):
    def __init__(self, dim=32, depth=4, grad_ckpt=True):
        super().__init__()
        self.input_scale = 0.5
        self.blocks = nn.ModuleList([ResidualMLP(dim, dim * 2) for _ in range(depth)])
        self.grad_ckpt = grad_ckpt
        self.norm = nn.LayerNorm(dim)
        for blk in self.blocks:
            blk.register_forward_hook(clamp_activation_hook)
        self.register_forward_pre_hook(scale_input_pre_hook)

    def forward(self, x):
        for blk in self.blocks:
            if self.grad_ckpt and self.training:
                x = checkpoint(blk, x, use_reentrant=False)
            else:
                x = blk(x)
        return self.norm(x)


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = Trunk()
        self.out = nn.Linear(32, 1)

    def forward(self, x):
        return self.out(self.trunk(x)).squeeze(-1)


def main():
    torch.manual_seed(0)
    model = Regressor()
    compiled = torch.compile(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(3):
        x, y = torch.randn(16, 32), torch.randn(16)
        loss = F.mse_loss(compiled(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
