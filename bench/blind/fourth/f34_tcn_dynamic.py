from typing import List

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalConv1d(nn.Conv1d):
    def __init__(self, in_channels, out_channels, kernel_size, dilation=1, **kwargs):
        super().__init__(in_channels, out_channels, kernel_size, padding=0, dilation=dilation, **kwargs)
        self.left_padding = (kernel_size - 1) * dilation

    def forward(self, x):
        return super().forward(F.pad(x, (self.left_padding, 0)))


class ResidualBlock(nn.Module):
    def __init__(self, residual_channels, skip_channels, dilation, kernel_size=2, cond_channels=None):
        super().__init__()
        self.dilated = CausalConv1d(residual_channels, 2 * residual_channels, kernel_size, dilation=dilation)
        self.cond = nn.Conv1d(cond_channels, 2 * residual_channels, 1) if cond_channels else None
        self.res_out = nn.Conv1d(residual_channels, residual_channels, 1)
        self.skip_out = nn.Conv1d(residual_channels, skip_channels, 1)

    def forward(self, x, c=None):
        h = self.dilated(x)
        if self.cond is not None and c is not None:
            h = h + self.cond(c)
        filt, gate = h.chunk(2, dim=1)
        h = torch.tanh(filt) * torch.sigmoid(gate)
        return (x + self.res_out(h)) * 0.7071067811865476, self.skip_out(h)


class WaveNet(nn.Module):
    def __init__(self, quantization_channels=32, residual_channels=16, skip_channels=16, layers=6, stacks=2,
                 cond_channels=8):
        super().__init__()
        self.embed = nn.Embedding(quantization_channels, residual_channels)
        layers_per_stack = layers // stacks
        self.blocks = nn.ModuleList([
            ResidualBlock(residual_channels, skip_channels, dilation=2 ** (i % layers_per_stack), cond_channels=cond_channels)
            for i in range(layers)
        ])
        self.post = nn.Sequential(nn.ReLU(), nn.Conv1d(skip_channels, skip_channels, 1), nn.ReLU(),
                                  nn.Conv1d(skip_channels, quantization_channels, 1))

    @property
    def receptive_field(self) -> int:
        return sum(b.dilated.left_padding for b in self.blocks) + 1

    def forward(self, tokens, cond=None):
        x = self.embed(tokens).transpose(1, 2)
        skips: List[torch.Tensor] = []
        for block in self.blocks:
            x, s = block(x, cond)
            skips.append(s)
        out = torch.stack(skips, dim=0).sum(dim=0)
        return self.post(out)


def mu_law_encode(audio, quantization_channels=32):
    mu = quantization_channels - 1
    safe = torch.clamp(audio, -1.0, 1.0)
    magnitude = torch.log1p(mu * torch.abs(safe)) / torch.log1p(torch.tensor(float(mu)))
    signal = torch.sign(safe) * magnitude
    return ((signal + 1) / 2 * mu + 0.5).long()


def main():
    torch.manual_seed(0)
    model = WaveNet()
    compiled = torch.compile(model, dynamic=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for length in (64, 96, 80):
        audio = torch.tanh(torch.randn(2, length + 1))
        tokens = mu_law_encode(audio)
        cond = torch.randn(2, 8, length)
        logits = compiled(tokens[:, :-1], cond)
        loss = F.cross_entropy(logits, tokens[:, 1:])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
