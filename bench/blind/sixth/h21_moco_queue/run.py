import math

import torch

from .encoder import ConvEncoder, augment
from .moco import MoCo


def momentum_schedule(step, total, base=0.99):
    # BYOL-style: momentum goes from base to 1 along a cosine
    return 1 - (1 - base) * (math.cos(math.pi * step / total) + 1) / 2


def main():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    model = MoCo(ConvEncoder())
    opt = torch.optim.SGD(model.encoder_q.parameters(), lr=0.03, momentum=0.9)
    train_step = torch.compile(model)
    images = torch.rand(64, 3, 16, 16)
    total = 6
    for step in range(total):
        batch = images[(step * 16) % 64:(step * 16) % 64 + 16]
        m = momentum_schedule(step, total)
        loss = train_step(augment(batch, gen), augment(batch, gen), m)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.detach(), int(model.queue_ptr)
