"""SpecAugment-style time/frequency masking drawn with numpy RNG inside the compiled training forward."""
import time

import numpy as np
import torch
import torch.nn as nn


class SpecAugment(nn.Module):
    def __init__(self, freq_mask=8, time_mask=10, n_freq_masks=2, n_time_masks=2):
        super().__init__()
        self.freq_mask = freq_mask
        self.time_mask = time_mask
        self.n_freq_masks = n_freq_masks
        self.n_time_masks = n_time_masks

    def forward(self, spec):
        if not self.training:
            return spec
        spec = spec.clone()
        _, n_freq, n_time = spec.shape
        f = np.random.randint(0, self.freq_mask + 1)
        f0 = np.random.randint(0, n_freq - f)
        spec[:, f0:f0 + f, :] = 0.0
        t = np.random.randint(0, self.time_mask + 1)
        t0 = np.random.randint(0, n_time - t)
        spec[:, :, t0:t0 + t] = 0.0
        return spec


class KeywordSpotter(nn.Module):
    def __init__(self, n_mels=40, n_keywords=12):
        super().__init__()
        self.augment = SpecAugment()
        self.conv = nn.Sequential(
            nn.Conv1d(n_mels, 64, 5, padding=2), nn.BatchNorm1d(64), nn.ReLU(),
            nn.Conv1d(64, 64, 5, padding=2, dilation=1), nn.BatchNorm1d(64), nn.ReLU(),
        )
        self.fc = nn.Linear(64, n_keywords)

    def forward(self, log_mel):
        start = time.time()
        x = self.augment(log_mel)
        x = self.conv(x).mean(-1)
        self.last_forward_s = time.time() - start
        return self.fc(x)


def main():
    torch.manual_seed(0)
    np.random.seed(0)
    model = KeywordSpotter()
    step = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for _ in range(3):
        x = torch.randn(4, 40, 50)
        y = torch.randint(0, 12, (4,))
        loss = nn.functional.cross_entropy(step(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        step(torch.randn(4, 40, 50))


if __name__ == "__main__":
    main()
