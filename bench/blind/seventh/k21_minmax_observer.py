"""Post-training quantization calibration with hand-written min/max observers on every layer."""
import torch
import torch.nn as nn


class MinMaxObserver(nn.Module):
    def __init__(self, dtype="quint8", averaging_constant=None):
        super().__init__()
        self.dtype = dtype
        self.averaging_constant = averaging_constant
        self.register_buffer("min_val", torch.tensor(float("inf")))
        self.register_buffer("max_val", torch.tensor(float("-inf")))

    def forward(self, x):
        x_min, x_max = x.detach().min(), x.detach().max()
        if self.averaging_constant is None:
            self.min_val.copy_(torch.minimum(self.min_val, x_min))
            self.max_val.copy_(torch.maximum(self.max_val, x_max))
        else:
            c = self.averaging_constant
            first = torch.isinf(self.min_val)
            self.min_val.copy_(torch.where(first, x_min, self.min_val + c * (x_min - self.min_val)))
            self.max_val.copy_(torch.where(first, x_max, self.max_val + c * (x_max - self.max_val)))
        return x

    def calculate_qparams(self):
        if self.dtype == "quint8":
            qmin, qmax = 0, 255
        else:
            qmin, qmax = -128, 127
        min_val = torch.clamp(self.min_val, max=0.0)
        max_val = torch.clamp(self.max_val, min=0.0)
        scale = (max_val - min_val) / float(qmax - qmin)
        scale = torch.clamp(scale, min=1e-8)
        zero_point = qmin - int(torch.round(min_val / scale))
        zero_point = max(qmin, min(qmax, zero_point))
        return scale, zero_point


class ObservedMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(8, 16), nn.Linear(16, 16), nn.Linear(16, 4)
        self.obs_in = MinMaxObserver("quint8")
        self.obs1 = MinMaxObserver("quint8", averaging_constant=0.01)
        self.obs2 = MinMaxObserver("qint8")

    def forward(self, x):
        x = self.obs_in(x)
        x = self.obs1(torch.relu(self.fc1(x)))
        x = self.obs2(torch.relu(self.fc2(x)))
        return self.fc3(x)


def calibrate(model, batches):
    for name, child in list(model.named_children()):
        if isinstance(child, MinMaxObserver):
            setattr(model, name, torch.compile(child))
    with torch.no_grad():
        for b in batches:
            model(b)
    qparams = {}
    for name, m in model.named_modules():
        if isinstance(m, MinMaxObserver):
            qparams[name] = torch.compile(m.calculate_qparams)()
    return qparams


def main():
    torch.manual_seed(0)
    model = ObservedMLP().eval()
    print(calibrate(model, [torch.randn(4, 8) for _ in range(3)]))


if __name__ == "__main__":
    main()
