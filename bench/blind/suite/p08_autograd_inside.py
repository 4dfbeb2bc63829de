"""Test cases: training steps, gradient penalties and parameter freezing."""
import torch
import torch.nn as nn


def test_backward_in_step():
    model = nn.Linear(4, 1)

    def train_step(x, y):
        pred = model(x).squeeze(-1)
        loss = nn.functional.mse_loss(pred, y)
        loss.backward()
        return loss.detach()

    opt = torch.compile(train_step, backend="eager")
    opt(torch.randn(8, 4), torch.randn(8))
    opt(torch.randn(8, 4), torch.randn(8))


def test_input_gradient_penalty():
    critic = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))

    def penalty(real, fake):
        alpha = torch.rand(real.shape[0], 1)
        mix = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        score = critic(mix).sum()
        (grad,) = torch.autograd.grad(score, mix, create_graph=True)
        return ((grad.norm(dim=1) - 1) ** 2).mean()

    opt = torch.compile(penalty, backend="eager")
    opt(torch.randn(4, 3), torch.randn(4, 3))
    opt(torch.randn(4, 3), torch.randn(4, 3))


def test_requires_grad_on_input():
    def saliency_prep(img):
        img.requires_grad_()
        return (img * 2.0).sum()

    opt = torch.compile(saliency_prep, backend="eager")
    opt(torch.randn(1, 3, 4, 4))
    opt(torch.randn(1, 3, 4, 4))


def test_freeze_by_attribute():
    def freeze(x, w):
        w.requires_grad = False
        return x @ w

    opt = torch.compile(freeze, backend="eager")
    opt(torch.randn(2, 3), torch.randn(3, 3))
    opt(torch.randn(2, 3), torch.randn(3, 3))


def test_detach_and_grad_read():
    def fn(x, w):
        y = (x @ w).detach()
        g = w.grad if w.grad is not None else torch.zeros_like(w)
        return y, g

    opt = torch.compile(fn, backend="eager")
    w = torch.randn(3, 3, requires_grad=True)
    opt(torch.randn(2, 3), w)
    opt(torch.randn(2, 3), w)


def main():
    torch.manual_seed(0)
    test_backward_in_step()
    test_input_gradient_penalty()
    test_requires_grad_on_input()
    test_freeze_by_attribute()
    test_detach_and_grad_read()
