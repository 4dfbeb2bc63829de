from typing import Callable, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


class Attack:
    def __init__(self, name: str, model: nn.Module):
        self.attack = name
        self.model = model
        self._normalization_applied = False
        self._targeted = False

    def get_logits(self, inputs):
        return self.model(inputs)

    def __call__(self, images, labels):
        given_training = self.model.training
        self.model.eval()
        adv_images = self.forward(images, labels)
        if given_training:
            self.model.train()
        return adv_images


class PGD(Attack):
    def __init__(self, model, eps=8 / 255, alpha=2 / 255, steps=3, random_start=True):
        super().__init__("PGD", model)
        self.eps = eps
        self.alpha = alpha
        self.steps = steps
        self.random_start = random_start

    def forward(self, images, labels):
        images = images.clone().detach()
        labels = labels.clone().detach()
        loss = nn.CrossEntropyLoss()
        adv_images = images.clone().detach()
        if self.random_start:
            adv_images = adv_images + torch.empty_like(adv_images).uniform_(-self.eps, self.eps)
            adv_images = torch.clamp(adv_images, min=0, max=1).detach()
        for _ in range(self.steps):
            adv_images.requires_grad = True
            outputs = self.get_logits(adv_images)
            cost = loss(outputs, labels)
            grad = torch.autograd.grad(cost, adv_images, retain_graph=False, create_graph=False)[0]
            adv_images = adv_images.detach() + self.alpha * grad.sign()
            delta = torch.clamp(adv_images - images, min=-self.eps, max=self.eps)
            adv_images = torch.clamp(images + delta, min=0, max=1).detach()
        return adv_images


class FGSM(Attack):
    def __init__(self, model, eps=8 / 255):
        super().__init__("FGSM", model)
        self.eps = eps

    def forward(self, images, labels):
        images = images.clone().detach()
        images.requires_grad_(True)
        cost = F.cross_entropy(self.get_logits(images), labels)
        grad = torch.autograd.grad(cost, images)[0]
        return torch.clamp(images + self.eps * grad.sign(), 0, 1).detach()


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        return self.fc(self.features(x).mean((2, 3)))


def robust_accuracy(model, attack: Optional[Callable], images, labels):
    if attack is not None:
        images = attack(images, labels)
    with torch.no_grad():
        pred = model(images).argmax(dim=1)
    correct = (pred == labels).sum().item()
    return correct / labels.numel()


def main():
    torch.manual_seed(0)
    model = SmallCNN().eval()
    evaluate = torch.compile(robust_accuracy)
    images, labels = torch.rand(4, 3, 16, 16), torch.randint(0, 10, (4,))
    clean = evaluate(model, None, images, labels)
    fgsm = evaluate(model, FGSM(model), images, labels)
    pgd = evaluate(model, PGD(model, steps=2), images, labels)
    return clean, fgsm, pgd


if __name__ == "__main__":
    main()
