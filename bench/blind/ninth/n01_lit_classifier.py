"""LightningModule-style image classifier driven by a small hand-written Trainer loop.

The training_step is compiled (as some Lightning users do by hand); it logs scalars through
self.log(), which turns tensors into Python floats for the progress bar.
"""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


class LightningModuleLite(nn.Module):
    """Just enough of pl.LightningModule: log() keeps scalars for the progress bar / loggers."""

    def __init__(self):
        super().__init__()
        self._logged = {}

    def log(self, name, value, prog_bar=False, on_step=True):
        if isinstance(value, torch.Tensor):
            value = value.detach().float().item()
        self._logged[name] = value

    @property
    def logged_metrics(self):
        return dict(self._logged)


class LitClassifier(LightningModuleLite):
    def __init__(self, in_ch=3, num_classes=10, lr=1e-3, label_smoothing=0.1):
        super().__init__()
        self.lr = lr
        self.label_smoothing = label_smoothing
        self.backbone = nn.Sequential(
            nn.Conv2d(in_ch, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
            nn.Conv2d(8, 16, 3, padding=1, stride=2), nn.BatchNorm2d(16), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.head = nn.Linear(16, num_classes)

    def forward(self, x):
        return self.head(self.backbone(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y, label_smoothing=self.label_smoothing)
        acc = (logits.argmax(dim=-1) == y).float().mean()
        self.log("train_loss", loss, prog_bar=True)
        self.log("train_acc", acc)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr, weight_decay=1e-4)


class MiniTrainer:
    def __init__(self, max_epochs=2, compile_step=True):
        self.max_epochs = max_epochs
        self.compile_step = compile_step
        self.history = []

    def fit(self, module, loader):
        opt = module.configure_optimizers()
        step_fn = torch.compile(module.training_step) if self.compile_step else module.training_step
        module.train()
        for epoch in range(self.max_epochs):
            for batch_idx, batch in enumerate(loader):
                opt.zero_grad(set_to_none=True)
                loss = step_fn(batch, batch_idx)
                loss.backward()
                opt.step()
            self.history.append(module.logged_metrics)
        return self.history


def make_loader(n_batches=4, bs=8):
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(bs, 3, 16, 16, generator=g), torch.randint(0, 10, (bs,), generator=g))
            for _ in range(n_batches)]


def main():
    torch.manual_seed(0)
    random.seed(0)
    model = LitClassifier()
    hist = MiniTrainer(max_epochs=2).fit(model, make_loader())
    return hist[-1]


if __name__ == "__main__":
    print(main())
