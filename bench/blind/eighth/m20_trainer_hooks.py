"""A small Trainer with callbacks; one callback installs forward hooks to track activation stats."""
from __future__ import annotations

from typing import Dict, List

import torch
import torch.nn as nn


class Callback:
    def on_epoch_start(self, trainer: "Trainer", epoch: int) -> None: ...
    def on_epoch_end(self, trainer: "Trainer", epoch: int) -> None: ...


class ActivationStats(Callback):
    """From `start_epoch` on, record the mean activation of every ReLU."""

    def __init__(self, start_epoch: int = 1) -> None:
        self.start_epoch = start_epoch
        self.handles: List = []
        self.stats: Dict[str, List[float]] = {}

    def on_epoch_start(self, trainer, epoch):
        if epoch == self.start_epoch:
            for name, mod in trainer.model.named_modules():
                if isinstance(mod, nn.ReLU):
                    self.handles.append(mod.register_forward_hook(self._make_hook(name)))

    def _make_hook(self, name: str):
        def hook(module, inputs, output):
            self.stats.setdefault(name, []).append(output.mean().item())
        return hook

    def on_epoch_end(self, trainer, epoch):
        if epoch == trainer.max_epochs - 2:
            for h in self.handles:
                h.remove()
            self.handles.clear()


class L1Ramp(Callback):
    """Turns on an L1 penalty on the outputs after the first epoch and ramps it up."""

    def __init__(self, per_epoch: float = 0.05) -> None:
        self.per_epoch = per_epoch

    def on_epoch_start(self, trainer, epoch):
        trainer.loss_weights["l1"] = self.per_epoch * epoch


class Trainer:
    def __init__(self, model: nn.Module, callbacks: List[Callback], max_epochs: int = 4) -> None:
        self.model = model
        self.callbacks = callbacks
        self.max_epochs = max_epochs
        self.loss_weights: Dict[str, float] = {"mse": 1.0, "l1": 0.0}
        self.opt = torch.optim.SGD(model.parameters(), lr=0.05)

    @torch.compile
    def training_step(self, xb: torch.Tensor, yb: torch.Tensor) -> torch.Tensor:
        out = self.model(xb)
        loss = self.loss_weights["mse"] * nn.functional.mse_loss(out, yb)
        if self.loss_weights["l1"] > 0:
            loss = loss + self.loss_weights["l1"] * out.abs().mean()
        return loss

    def fit(self, x: torch.Tensor, y: torch.Tensor) -> None:
        for epoch in range(self.max_epochs):
            for cb in self.callbacks:
                cb.on_epoch_start(self, epoch)
            for i in range(0, x.shape[0], 16):
                loss = self.training_step(x[i:i + 16], y[i:i + 16])
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            for cb in self.callbacks:
                cb.on_epoch_end(self, epoch)
            print(f"epoch {epoch} loss {loss.item():.4f}")


def main() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 1))
    stats = ActivationStats(start_epoch=1)
    trainer = Trainer(model, [stats, L1Ramp()], max_epochs=4)
    trainer.fit(torch.randn(48, 8), torch.randn(48, 1))
    print({k: len(v) for k, v in stats.stats.items()})


if __name__ == "__main__":
    main()
