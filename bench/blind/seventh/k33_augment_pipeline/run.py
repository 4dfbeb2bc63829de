import numpy as np
import torch
import torch.nn.functional as F

from .model import AugmentedClassifier


def main():
    np.random.seed(0)
    torch.manual_seed(0)
    model = AugmentedClassifier()
    cmodel = torch.compile(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(3):
        x, y = torch.rand(8, 3, 16, 16), torch.randint(0, 5, (8,))
        loss = F.cross_entropy(cmodel(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
