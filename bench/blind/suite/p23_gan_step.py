"""GAN training: one compiled step alternating discriminator and generator updates."""
import torch
import torch.nn as nn


def set_requires_grad(module, flag):
    for p in module.parameters():
        p.requires_grad_(flag)


class GANTrainer:
    def __init__(self, z_dim=8, x_dim=4):
        self.z_dim = z_dim
        self.G = nn.Sequential(nn.Linear(z_dim, 16), nn.ReLU(), nn.Linear(16, x_dim))
        self.D = nn.Sequential(nn.Linear(x_dim, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
        self.opt_g = torch.optim.Adam(self.G.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.opt_d = torch.optim.Adam(self.D.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.bce = nn.BCEWithLogitsLoss()

    def d_loss(self, real, fake):
        ones = torch.ones(real.shape[0], 1)
        zeros = torch.zeros(fake.shape[0], 1)
        return self.bce(self.D(real), ones) + self.bce(self.D(fake.detach()), zeros)

    def train_step(self, real):
        z = torch.randn(real.shape[0], self.z_dim)
        fake = self.G(z)
        set_requires_grad(self.D, True)
        self.opt_d.zero_grad(set_to_none=True)
        loss_d = self.d_loss(real, fake)
        loss_d.backward()
        self.opt_d.step()
        set_requires_grad(self.D, False)
        self.opt_g.zero_grad(set_to_none=True)
        loss_g = self.bce(self.D(fake), torch.ones(real.shape[0], 1))
        loss_g.backward()
        self.opt_g.step()
        return loss_d.detach(), loss_g.detach()


def main():
    torch.manual_seed(0)
    tr = GANTrainer()
    lossd = torch.compile(tr.d_loss, backend="eager")
    lossd(torch.randn(8, 4), torch.randn(8, 4))
    lossd(torch.randn(8, 4), torch.randn(8, 4, requires_grad=True))

    step = torch.compile(tr.train_step, backend="eager")
    step(torch.randn(8, 4))
    step(torch.randn(8, 4))
