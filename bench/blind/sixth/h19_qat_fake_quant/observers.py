import torch
import torch.nn as nn


class MovingAverageMinMaxObserver(nn.Module):
    def __init__(self, averaging_constant=0.1):
        super().__init__()
        self.c = averaging_constant
        self.register_buffer("min_val", torch.tensor(float("inf")))
        self.register_buffer("max_val", torch.tensor(float("-inf")))
        self.register_buffer("initialized", torch.tensor(False))

    def forward(self, x):
        x_min, x_max = x.detach().aminmax()
        if not self.initialized:
            self.min_val.copy_(x_min)
            self.max_val.copy_(x_max)
            self.initialized.fill_(True)
        else:
            self.min_val.lerp_(x_min, self.c)
            self.max_val.lerp_(x_max, self.c)
        return x

    def calculate_qparams(self, qmin, qmax):
        min_val = torch.clamp(self.min_val, max=0.0)
        max_val = torch.clamp(self.max_val, min=0.0)
        scale = (max_val - min_val).clamp(min=1e-8) / float(qmax - qmin)
        zero_point = (qmin - torch.round(min_val / scale)).clamp(qmin, qmax)
        return scale, zero_point


class FakeQuantize(nn.Module):
    def __init__(self, bits=8):
        super().__init__()
        self.bits = bits
        self.observer = MovingAverageMinMaxObserver()
        self.observer_enabled = True
        self.fake_quant_enabled = True

    @property
    def qrange(self):
        return 0, 2 ** self.bits - 1

    def forward(self, x):
        if self.observer_enabled:
            self.observer(x)
        if not self.fake_quant_enabled:
            return x
        qmin, qmax = self.qrange
        scale, zp = self.observer.calculate_qparams(qmin, qmax)
        return torch.fake_quantize_per_tensor_affine(x, scale.item(), int(zp), qmin, qmax)
