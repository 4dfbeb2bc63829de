"""DCGAN-style training steps with a compiled discriminator shared by the D and G updates."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Generator(nn.Module):
    def __init__(self, z_dim=8, ch=8):
        super().__init__()
        self.fc = nn.Linear(z_dim, ch * 4 * 4)
        self.up = nn.Sequential(nn.ConvTranspose2d(ch, ch, 4, 2, 1), nn.BatchNorm2d(ch), nn.ReLU(),
                                nn.Conv2d(ch, 1, 3, padding=1), nn.Tanh())
        self.ch = ch

    def forward(self, z):
        return self.up(self.fc(z).view(-1, self.ch, 4, 4))


class Discriminator(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(1, ch, 4, 2, 1), nn.LeakyReLU(0.2),
                                 nn.Conv2d(ch, ch, 3, padding=1), nn.LeakyReLU(0.2),
                                 nn.Flatten(), nn.Linear(ch * 4 * 4, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def set_requires_grad(module, flag):
    for p in module.parameters():
        p.requires_grad = flag


def train_step(G, D, opt_g, opt_d, real, z_dim=8):
    bs = real.shape[0]
    z = torch.randn(bs, z_dim)
    fake = G(z)

    set_requires_grad(D, True)
    d_real = D(real)
    d_fake = D(fake.detach())
    loss_d = F.softplus(-d_real).mean() + F.softplus(d_fake).mean()
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()

    set_requires_grad(D, False)
    loss_g = F.softplus(-D(fake)).mean()
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    return loss_d.item(), loss_g.item()


def main():
    torch.manual_seed(0)
    G = Generator()
    D_eager = Discriminator()
    D = torch.compile(D_eager)
    opt_g = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(D_eager.parameters(), lr=2e-4, betas=(0.5, 0.999))
    data = torch.rand(20, 1, 8, 8) * 2 - 1
    for i in range(0, 20, 8):
        print(train_step(G, D, opt_g, opt_d, data[i:i + 8]))


if __name__ == "__main__":
    main()
