"""Delayed-scaling fake-quant Linear (fp8-style amax history) with a defensive try/except in forward."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

FP8_E4M3_MAX = 448.0


class AmaxHistory:
    def __init__(self, length=4):
        self.length = length
        self.values = [1.0] * length

    def push(self, v):
        self.values = self.values[1:] + [v]

    def scale(self, fmax=FP8_E4M3_MAX, margin=0):
        amax = max(self.values)
        return (fmax / amax) / (2 ** margin)


def fake_quant(x, scale, qmax=FP8_E4M3_MAX):
    return torch.clamp(torch.round(x * scale), -qmax, qmax) / scale


class Fp8Linear(nn.Linear):
    def __init__(self, in_features, out_features, bias=True, history=4):
        super().__init__(in_features, out_features, bias)
        self.x_hist = AmaxHistory(history)
        self.w_hist = AmaxHistory(history)

    def forward(self, x):
        try:
            self.x_hist.push(float(x.detach().abs().max()))
            self.w_hist.push(float(self.weight.detach().abs().max()))
        except RuntimeError:
            # empty input: keep the previous history
            pass
        xq = fake_quant(x, self.x_hist.scale())
        wq = fake_quant(self.weight, self.w_hist.scale())
        # straight-through estimator
        xq = x + (xq - x).detach()
        wq = self.weight + (wq - self.weight).detach()
        return F.linear(xq, wq, self.bias)


class QuantMLP(nn.Module):
    def __init__(self, d_in=16, hidden=32, d_out=4):
        super().__init__()
        self.fc1 = Fp8Linear(d_in, hidden)
        self.act = nn.GELU()
        self.fc2 = Fp8Linear(hidden, d_out)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def main():
    torch.manual_seed(0)
    random.seed(0)
    model = QuantMLP()
    model.compile()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(5):
        x = torch.randn(16, 16)
        y = torch.randint(0, 4, (16,))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


if __name__ == "__main__":
    print(main())
