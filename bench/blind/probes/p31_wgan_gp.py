"""WGAN-GP critic step: gradient penalty via autograd.grad, lazily-initialised layers, custom autograd op."""
import torch
import torch.nn as nn


class ScaleGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return g * ctx.scale, None


class LazyCritic(nn.Module):
    """Input width is only known at the first call (like nn.LazyLinear, but hand-rolled)."""

    def __init__(self, hidden=32):
        super().__init__()
        self.hidden = hidden
        self.w_in = None
        self.body = nn.Sequential(nn.LeakyReLU(0.2), nn.Linear(hidden, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, 1))

    def forward(self, x):
        if self.w_in is None:
            self.w_in = nn.Parameter(torch.randn(x.size(-1), self.hidden) * 0.1)
        return self.body(x @ self.w_in)


class Generator(nn.Module):
    def __init__(self, zdim=4, out=6):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(zdim, 32), nn.ReLU(), nn.Linear(32, out))

    def forward(self, z):
        return self.net(z)


def gradient_penalty(critic, real, fake):
    eps = torch.rand(real.size(0), 1)
    interp = (eps * real + (1 - eps) * fake).detach()
    interp.requires_grad_(True)
    scores = critic(interp)
    grads, = torch.autograd.grad(scores.sum(), interp, create_graph=True)
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


@torch.compile
def critic_step(critic, gen, real, z, gp_weight=10.0, grad_scale=1.0):
    fake = ScaleGrad.apply(gen(z), grad_scale)
    loss = critic(fake.detach()).mean() - critic(real).mean()
    gp = gradient_penalty(critic, real, fake)
    return loss + gp_weight * gp


def main():
    torch.manual_seed(0)
    critic, gen = LazyCritic(), Generator()
    critic(torch.randn(2, 6))  # materialise lazily-created weights once, eagerly
    opt = torch.optim.Adam(list(critic.parameters()) + [critic.w_in], lr=1e-4, betas=(0.5, 0.9))
    for _ in range(2):
        loss = critic_step(critic, gen, torch.randn(8, 6), torch.randn(8, 4))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


if __name__ == "__main__":
    print(main())
