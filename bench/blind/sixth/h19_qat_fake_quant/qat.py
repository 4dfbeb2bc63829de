import torch.nn as nn
import torch.nn.functional as F

from .observers import FakeQuantize


class QuantLinear(nn.Linear):
    def __init__(self, in_f, out_f, bits=8):
        super().__init__(in_f, out_f)
        self.act_fq = FakeQuantize(bits)
        self.weight_fq = FakeQuantize(bits)

    def forward(self, x):
        return F.linear(self.act_fq(x), self.weight_fq(self.weight), self.bias)


class QuantMLP(nn.Module):
    def __init__(self, d_in=16, hidden=32, d_out=4, bits=8):
        super().__init__()
        self.fc1 = QuantLinear(d_in, hidden, bits)
        self.fc2 = QuantLinear(hidden, d_out, bits)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def fake_quants(model):
    return [m for m in model.modules() if isinstance(m, FakeQuantize)]


def set_bits(model, bits):
    for fq in fake_quants(model):
        fq.bits = bits


def freeze_observers(model):
    for fq in fake_quants(model):
        fq.observer_enabled = False


def disable_fake_quant(model):
    for fq in fake_quants(model):
        fq.fake_quant_enabled = False
