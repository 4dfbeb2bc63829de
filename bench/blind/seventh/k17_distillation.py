"""Knowledge distillation: a compiled teacher and a compiled soft-target loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, widths, dropout=0.1):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(widths[:-1], widths[1:])])
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        for layer in self.layers[:-1]:
            x = self.dropout(torch.relu(layer(x)))
        return self.layers[-1](x)


def kd_loss(student_logits, teacher_logits, labels, T=4.0, alpha=0.9):
    soft = F.kl_div(F.log_softmax(student_logits / T, dim=-1), F.softmax(teacher_logits / T, dim=-1),
                    reduction="batchmean") * (T * T)
    hard = F.cross_entropy(student_logits, labels)
    return alpha * soft + (1 - alpha) * hard


class Distiller:
    def __init__(self, teacher, student, temperature=4.0):
        self.teacher = torch.compile(teacher.eval())
        self.student = student
        self.temperature = temperature
        self.loss_fn = torch.compile(kd_loss)
        self.opt = torch.optim.Adam(student.parameters(), lr=1e-3)

    def step(self, x, y):
        with torch.no_grad():
            t_logits = self.teacher(x)
        s_logits = self.student(x)
        loss = self.loss_fn(s_logits, t_logits, y, T=self.temperature)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()

    def teacher_agreement(self, x):
        # teacher predictions used as a reference at the end of each epoch
        return (self.teacher(x).argmax(-1) == self.student(x).argmax(-1)).float().mean()


def main():
    torch.manual_seed(0)
    teacher = MLP([20, 64, 64, 5])
    student = MLP([20, 16, 5])
    d = Distiller(teacher, student)
    for epoch in range(2):
        for _ in range(3):
            x, y = torch.randn(16, 20), torch.randint(0, 5, (16,))
            d.step(x, y)
        print(epoch, d.teacher_agreement(torch.randn(16, 20)))
        d.temperature = max(1.0, d.temperature / 2)


if __name__ == "__main__":
    main()
