"""Diagonal state-space sequence layer (S4D-style): kernel from discretised complex diagonal SSM, FFT convolution."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class S4DKernel(nn.Module):
    def __init__(self, d_model, n_state=16, dt_min=1e-3, dt_max=1e-1):
        super().__init__()
        log_dt = torch.rand(d_model) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min)
        self.log_dt = nn.Parameter(log_dt)
        self.log_A_real = nn.Parameter(torch.log(0.5 * torch.ones(d_model, n_state // 2)))
        self.A_imag = nn.Parameter(math.pi * torch.arange(n_state // 2).float().repeat(d_model, 1))
        self.C = nn.Parameter(torch.randn(d_model, n_state // 2, 2) * 0.5 ** 0.5)

    def forward(self, length):
        dt = self.log_dt.exp()
        C = torch.view_as_complex(self.C)
        A = -self.log_A_real.exp() + 1j * self.A_imag
        dtA = A * dt[:, None]
        pos = torch.arange(length, dtype=torch.float32)
        K = dtA[:, :, None] * pos
        C = C * (torch.exp(dtA) - 1.0) / A
        return 2 * torch.einsum("dn,dnl->dl", C, torch.exp(K)).real


class S4DLayer(nn.Module):
    def __init__(self, d_model, dropout=0.0):
        super().__init__()
        self.kernel = S4DKernel(d_model)
        self.D = nn.Parameter(torch.randn(d_model))
        self.out = nn.Sequential(nn.Conv1d(d_model, 2 * d_model, 1), nn.GLU(dim=1))
        self.norm = nn.LayerNorm(d_model)

    def forward(self, u):
        x = self.norm(u).transpose(1, 2)
        L = x.shape[-1]
        k = self.kernel(L)
        k_f = torch.fft.rfft(k, n=2 * L)
        x_f = torch.fft.rfft(x, n=2 * L)
        y = torch.fft.irfft(x_f * k_f, n=2 * L)[..., :L]
        y = y + x * self.D[:, None]
        y = self.out(F.gelu(y))
        return u + y.transpose(1, 2)


class SSMClassifier(nn.Module):
    def __init__(self, d_in=1, d_model=16, n_layers=2, n_classes=4):
        super().__init__()
        self.encoder = nn.Linear(d_in, d_model)
        self.layers = nn.ModuleList(S4DLayer(d_model) for _ in range(n_layers))
        self.decoder = nn.Linear(d_model, n_classes)

    def forward(self, x):
        h = self.encoder(x)
        for layer in self.layers:
            h = layer(h)
        return self.decoder(h.mean(dim=1))


def main():
    torch.manual_seed(0)
    model = SSMClassifier()
    step_model = torch.compile(model, backend="eager")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    for _ in range(3):
        x = torch.randn(8, 64, 1)
        y = torch.randint(0, 4, (8,))
        loss = F.cross_entropy(step_model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
