"""BYOL/DINO-style self-distillation with a lazily created EMA teacher (copy.deepcopy of the student)."""
import copy
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


class ProjectionHead(nn.Module):
    def __init__(self, d_in, hidden=32, d_out=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.BatchNorm1d(hidden), nn.ReLU(inplace=True),
                                 nn.Linear(hidden, d_out))

    def forward(self, x):
        return self.net(x)


class Encoder(nn.Module):
    def __init__(self, d_in=24, width=32, proj=16):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(d_in, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
        self.projector = ProjectionHead(width, d_out=proj)

    def forward(self, x):
        return self.projector(self.backbone(x))


class BYOL(nn.Module):
    def __init__(self, student, proj=16, base_momentum=0.996):
        super().__init__()
        self.student = student
        self.predictor = ProjectionHead(proj, d_out=proj)
        self.teacher = None
        self.base_momentum = base_momentum

    def _init_teacher(self):
        self.teacher = copy.deepcopy(self.student)
        for p in self.teacher.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def update_teacher(self, momentum):
        for ps, pt in zip(self.student.parameters(), self.teacher.parameters()):
            pt.mul_(momentum).add_(ps.detach(), alpha=1.0 - momentum)

    @staticmethod
    def regression_loss(p, z):
        return 2 - 2 * F.cosine_similarity(p, z.detach(), dim=-1).mean()

    def forward(self, v1, v2):
        if self.teacher is None:
            self._init_teacher()
        p1 = self.predictor(self.student(v1))
        p2 = self.predictor(self.student(v2))
        with torch.no_grad():
            z1 = self.teacher(v1)
            z2 = self.teacher(v2)
        return self.regression_loss(p1, z2) + self.regression_loss(p2, z1)


def augment(x, g):
    mask = (torch.rand(x.shape, generator=g) > 0.1).float()
    return x * mask + 0.05 * torch.randn(x.shape, generator=g)


def main():
    torch.manual_seed(0)
    random.seed(0)
    g = torch.Generator().manual_seed(0)
    byol = BYOL(Encoder())
    train_step = torch.compile(byol)
    opt = torch.optim.AdamW(list(byol.student.parameters()) + list(byol.predictor.parameters()), lr=1e-3)
    for step in range(5):
        x = torch.randn(16, 24, generator=g)
        loss = train_step(augment(x, g), augment(x, g))
        opt.zero_grad()
        loss.backward()
        opt.step()
        byol.update_teacher(byol.base_momentum)
    return loss.item()


if __name__ == "__main__":
    print(main())
