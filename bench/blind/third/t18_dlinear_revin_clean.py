"""DLinear with reversible instance normalisation: series decomposition by moving average, per-channel linear heads."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RevIN(nn.Module):
    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.affine_weight = nn.Parameter(torch.ones(num_features))
        self.affine_bias = nn.Parameter(torch.zeros(num_features))

    def normalize(self, x):
        mean = x.mean(dim=1, keepdim=True).detach()
        stdev = torch.sqrt(x.var(dim=1, keepdim=True, unbiased=False) + self.eps).detach()
        x = (x - mean) / stdev
        return x * self.affine_weight + self.affine_bias, mean, stdev

    def denormalize(self, x, mean, stdev):
        x = (x - self.affine_bias) / (self.affine_weight + self.eps * self.eps)
        return x * stdev + mean


class MovingAvg(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.kernel_size = kernel_size

    def forward(self, x):
        pad = (self.kernel_size - 1) // 2
        front = x[:, :1, :].repeat(1, pad, 1)
        end = x[:, -1:, :].repeat(1, pad, 1)
        x = torch.cat([front, x, end], dim=1)
        return F.avg_pool1d(x.permute(0, 2, 1), self.kernel_size, stride=1).permute(0, 2, 1)


class DLinear(nn.Module):
    def __init__(self, seq_len, pred_len, channels, kernel_size=5):
        super().__init__()
        self.revin = RevIN(channels)
        self.decomp = MovingAvg(kernel_size)
        self.seasonal = nn.Linear(seq_len, pred_len)
        self.trend = nn.Linear(seq_len, pred_len)

    def forward(self, x):
        x, mean, stdev = self.revin.normalize(x)
        trend = self.decomp(x)
        seasonal = x - trend
        out = self.seasonal(seasonal.transpose(1, 2)) + self.trend(trend.transpose(1, 2))
        return self.revin.denormalize(out.transpose(1, 2), mean, stdev)


def main():
    torch.manual_seed(0)
    model = DLinear(seq_len=24, pred_len=8, channels=3)
    model.compile(backend="eager")
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(3):
        x = torch.randn(16, 24, 3).cumsum(1)
        y = torch.randn(16, 8, 3).cumsum(1) + x[:, -1:, :]
        loss = F.l1_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
