"""Post-training quantization helpers: min/max observer calibration, then int8 fake-quantized linear inference."""
import torch
import torch.nn as nn


class MinMaxObserver(nn.Module):
    def __init__(self, qmin=-128, qmax=127, averaging=0.9):
        super().__init__()
        self.qmin, self.qmax = qmin, qmax
        self.averaging = averaging
        self.min_val = None
        self.max_val = None

    def forward(self, x):
        lo, hi = x.min().item(), x.max().item()
        if self.min_val is None:
            self.min_val, self.max_val = lo, hi
        else:
            self.min_val = self.averaging * self.min_val + (1 - self.averaging) * lo
            self.max_val = self.averaging * self.max_val + (1 - self.averaging) * hi
        return x

    def qparams(self):
        lo, hi = min(self.min_val, 0.0), max(self.max_val, 0.0)
        scale = max((hi - lo) / (self.qmax - self.qmin), 1e-8)
        zero_point = int(round(self.qmin - lo / scale))
        return scale, zero_point


def fake_quantize(x, scale, zero_point, qmin=-128, qmax=127):
    q = torch.clamp(torch.round(x / scale) + zero_point, qmin, qmax)
    return (q - zero_point) * scale


class QuantLinear(nn.Module):
    def __init__(self, linear):
        super().__init__()
        self.linear = linear
        self.act_obs = MinMaxObserver()
        self.calibrating = True
        w = linear.weight.detach()
        self.w_scale = (w.abs().amax(dim=1, keepdim=True) / 127).clamp(min=1e-8)

    def forward(self, x):
        if self.calibrating:
            self.act_obs(x)
            return self.linear(x)
        scale, zp = self.act_obs.qparams()
        xq = fake_quantize(x, scale, zp)
        wq = torch.clamp(torch.round(self.linear.weight / self.w_scale), -127, 127) * self.w_scale
        return nn.functional.linear(xq, wq, self.linear.bias)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = QuantLinear(nn.Linear(12, 24))
        self.fc2 = QuantLinear(nn.Linear(24, 4))

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))

    def set_calibrating(self, flag):
        for m in self.modules():
            if isinstance(m, QuantLinear):
                m.calibrating = flag


def main():
    torch.manual_seed(0)
    net = Net().eval()
    run = torch.compile(net, backend="eager")
    with torch.no_grad():
        for _ in range(3):
            run(torch.randn(16, 12))
        net.set_calibrating(False)
        for bs in (16, 16):
            run(torch.randn(bs, 12))
