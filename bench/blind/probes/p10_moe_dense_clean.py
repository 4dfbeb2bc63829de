"""Dense-dispatch Switch MoE (einsum over a capacity-limited dispatch tensor). Written to compile cleanly."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SwitchFFN(nn.Module):
    def __init__(self, dim, hidden, num_experts, capacity):
        super().__init__()
        self.num_experts, self.capacity = num_experts, capacity
        self.router = nn.Linear(dim, num_experts, bias=False)
        self.w_in = nn.Parameter(torch.randn(num_experts, dim, hidden) * dim ** -0.5)
        self.w_out = nn.Parameter(torch.randn(num_experts, hidden, dim) * hidden ** -0.5)

    def dispatch(self, x):
        probs = F.softmax(self.router(x), dim=-1)
        gate, idx = probs.max(dim=-1)
        mask = F.one_hot(idx, self.num_experts).to(x.dtype)
        pos = (torch.cumsum(mask, dim=0) - 1) * mask
        keep = (pos < self.capacity).to(x.dtype) * mask
        pos_oh = F.one_hot(pos.sum(-1).long().clamp(max=self.capacity - 1), self.capacity).to(x.dtype)
        dispatch = keep[:, :, None] * pos_oh[:, None, :]
        combine = dispatch * gate[:, None, None]
        aux = (mask.mean(0) * probs.mean(0)).sum() * self.num_experts
        return dispatch, combine, aux

    def forward(self, x):
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        dispatch, combine, aux = self.dispatch(x)
        expert_in = torch.einsum("tec,td->ecd", dispatch, x)
        h = F.gelu(torch.bmm(expert_in, self.w_in))
        expert_out = torch.bmm(h, self.w_out)
        y = torch.einsum("tec,ecd->td", combine, expert_out)
        return y.reshape(shape), aux


class Model(nn.Module):
    def __init__(self, dim=16, depth=2):
        super().__init__()
        self.layers = nn.ModuleList([SwitchFFN(dim, 32, 4, capacity=8) for _ in range(depth)])
        self.norms = nn.ModuleList([nn.LayerNorm(dim) for _ in range(depth)])

    def forward(self, x):
        total_aux = x.new_zeros(())
        for norm, layer in zip(self.norms, self.layers):
            y, aux = layer(norm(x))
            x = x + y
            total_aux = total_aux + aux
        return x, total_aux


def main():
    torch.manual_seed(0)
    model = Model()
    compiled = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(2, 12, 16)
    for _ in range(3):
        y, aux = compiled(x)
        loss = y.pow(2).mean() + 0.01 * aux
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


if __name__ == "__main__":
    print(main())
