"""YOLOv5-style ModelEMA with an update counter, plus an autocast switch on the trainer."""
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelEMA:
    def __init__(self, model, decay=0.9999, tau=20, updates=0):
        self.ema = copy.deepcopy(model).eval()
        self.updates = updates
        self.decay_fn = lambda x: decay * (1 - math.exp(-x / tau))
        for p in self.ema.parameters():
            p.requires_grad_(False)

    def update(self, model):
        with torch.no_grad():
            self.updates += 1
            d = self.decay_fn(self.updates)
            msd = model.state_dict()
            for k, v in self.ema.state_dict().items():
                if v.dtype.is_floating_point:
                    v *= d
                    v += (1 - d) * msd[k].detach()


class SmallNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.SiLU(),
                                  nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5))

    def forward(self, x):
        return self.body(x)


class Trainer:
    def __init__(self, amp=False):
        self.model = SmallNet()
        self.ema = ModelEMA(self.model)
        self.amp = amp
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01)
        self.ema_update = torch.compile(self.ema.update)
        self.forward = torch.compile(self._forward)

    def _forward(self, model, images, targets=None):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.amp):
            logits = model(images)
        if targets is None:
            return logits.float()
        return F.cross_entropy(logits.float(), targets)

    def train_step(self, images, targets):
        loss = self.forward(self.model, images, targets)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.ema_update(self.model)
        return loss.detach()

    @torch.no_grad()
    def validate(self, images):
        return self.forward(self.ema.ema, images)


def main():
    torch.manual_seed(0)
    trainer = Trainer(amp=False)
    for epoch in range(2):
        for _ in range(2):
            trainer.train_step(torch.randn(4, 3, 16, 16), torch.randint(0, 5, (4,)))
        trainer.validate(torch.randn(4, 3, 16, 16))
        trainer.amp = True
    assert trainer.ema.updates == 4


if __name__ == "__main__":
    main()
