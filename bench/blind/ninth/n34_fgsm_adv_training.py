"""Adversarial training (FGSM, Goodfellow et al.): the compiled model sees inputs with and without grad."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


class LeNet(nn.Module):
    def __init__(self, n_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 64)
        self.fc2 = nn.Linear(64, n_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


def fgsm(model, x, y, eps):
    x_adv = x.clone().detach().requires_grad_(True)
    loss = F.cross_entropy(model(x_adv), y)
    grad, = torch.autograd.grad(loss, x_adv)
    return (x_adv + eps * grad.sign()).clamp(0, 1).detach()


def main():
    torch.manual_seed(0)
    random.seed(0)
    model = LeNet()
    cmodel = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    eps = 8 / 255
    for step in range(4):
        x = torch.rand(8, 1, 28, 28)
        y = torch.randint(0, 10, (8,))
        model.eval()
        x_adv = fgsm(cmodel, x, y, eps)
        model.train()
        loss = 0.5 * F.cross_entropy(cmodel(x), y) + 0.5 * F.cross_entropy(cmodel(x_adv), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


if __name__ == "__main__":
    print(main())
