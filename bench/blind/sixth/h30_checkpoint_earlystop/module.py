import torch
import torch.nn as nn
import torch.nn.functional as F

from .hooks import LoggingMixin


class Denoiser(nn.Module, LoggingMixin):
    def __init__(self, ch=8):
        nn.Module.__init__(self)
        LoggingMixin.__init__(self)
        self.enc = nn.Sequential(nn.Conv2d(1, ch, 3, padding=1), nn.ReLU(), nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU())
        self.dec = nn.Conv2d(ch, 1, 3, padding=1)
        self.current_epoch = 0
        self.noise_levels = (0.1, 0.2, 0.3)

    def forward(self, x):
        return x - self.dec(self.enc(x))

    def noise_std(self):
        # curriculum: harder noise every epoch
        return self.noise_levels[min(self.current_epoch, len(self.noise_levels) - 1)]

    def training_step(self, clean, batch_idx):
        noisy = clean + self.noise_std() * torch.randn_like(clean)
        loss = F.mse_loss(self(noisy), clean)
        self.log("train_loss", loss, on_step=batch_idx % 2 == 0)
        return loss

    def validation_step(self, clean, batch_idx):
        noisy = clean + 0.2 * torch.randn_like(clean)
        out = self(noisy)
        mse = F.mse_loss(out, clean)
        psnr = 10 * torch.log10(1.0 / mse)
        self.log("val_psnr", psnr)
        self.maybe_dump(batch_idx, out)
        return psnr
