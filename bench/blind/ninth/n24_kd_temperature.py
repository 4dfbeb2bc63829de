"""Knowledge distillation loss built by a factory; the temperature is annealed through a setter closure."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_kd_criterion(temperature=4.0, alpha=0.9):
    T = temperature

    def set_temperature(t):
        nonlocal T
        T = t

    @torch.compile
    def kd_loss(student_logits, teacher_logits, labels):
        soft = F.kl_div(F.log_softmax(student_logits / T, dim=-1), F.softmax(teacher_logits / T, dim=-1),
                        reduction="batchmean") * (T * T)
        hard = F.cross_entropy(student_logits, labels)
        return alpha * soft + (1.0 - alpha) * hard

    return kd_loss, set_temperature


def mlp(d_in, width, depth, d_out):
    layers, d = [], d_in
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    return nn.Sequential(*layers, nn.Linear(d, d_out))


def main():
    torch.manual_seed(0)
    random.seed(0)
    teacher = mlp(20, 64, 3, 5).eval()
    student = mlp(20, 16, 1, 5)
    kd_loss, set_temperature = make_kd_criterion()
    opt = torch.optim.Adam(student.parameters(), lr=1e-3)
    epochs = 4
    for epoch in range(epochs):
        set_temperature(4.0 - 3.0 * epoch / (epochs - 1))
        for step in range(3):
            x = torch.randn(32, 20)
            y = torch.randint(0, 5, (32,))
            with torch.no_grad():
                t_logits = teacher(x)
            loss = kd_loss(student(x), t_logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return loss.item()


if __name__ == "__main__":
    print(main())
