import functools
import os
from typing import Any, Dict, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


def rank_zero_only(fn):
    @functools.wraps(fn)
    def wrapped_fn(*args, **kwargs):
        if rank_zero_only.rank == 0:
            return fn(*args, **kwargs)
        return None

    return wrapped_fn


rank_zero_only.rank = int(os.environ.get("LOCAL_RANK", 0))


@rank_zero_only
def rank_zero_info(*args, **kwargs):
    print(*args, **kwargs)


class LightningModule(nn.Module):
    def __init__(self):
        super().__init__()
        self._trainer = None
        self._current_fx_name: Optional[str] = None
        self._results: Dict[str, torch.Tensor] = {}

    @property
    def trainer(self):
        if self._trainer is None:
            raise RuntimeError(f"{self.__class__.__qualname__} is not attached to a `Trainer`.")
        return self._trainer

    @trainer.setter
    def trainer(self, trainer):
        self._trainer = trainer

    @property
    def global_step(self) -> int:
        return self.trainer.global_step if self._trainer else 0

    def log(self, name: str, value, prog_bar: bool = False, on_step: bool = True, on_epoch: bool = False,
            batch_size: Optional[int] = None):
        if not isinstance(value, torch.Tensor):
            value = torch.tensor(value, dtype=torch.float32)
        key = f"{self._current_fx_name}/{name}" if self._current_fx_name else name
        self._results[key] = value.detach()
        if on_step and self.trainer.global_step % self.trainer.log_every_n_steps == 0:
            self.trainer.logged_metrics[name] = float(value)
            if prog_bar:
                self.trainer.progress_bar_metrics[name] = round(float(value), 4)

    def log_dict(self, metrics: Dict[str, Any], **kwargs):
        for k, v in metrics.items():
            self.log(k, v, **kwargs)


class LitClassifier(LightningModule):
    def __init__(self, in_dim=16, hidden=32, num_classes=4, lr=1e-3, label_smoothing=0.0):
        super().__init__()
        self.hparams = dict(in_dim=in_dim, hidden=hidden, num_classes=num_classes, lr=lr, label_smoothing=label_smoothing)
        self.backbone = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Dropout(0.1), nn.Linear(hidden, hidden), nn.ReLU())
        self.classifier = nn.Linear(hidden, num_classes)

    def forward(self, x):
        return self.classifier(self.backbone(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y, label_smoothing=self.hparams["label_smoothing"])
        acc = (logits.argmax(-1) == y).float().mean()
        self.log_dict({"train_loss": loss, "train_acc": acc}, prog_bar=True)
        if batch_idx == 0:
            rank_zero_info(f"epoch {self.trainer.current_epoch}: first batch loss {loss.item():.4f}")
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.log("val_loss", F.cross_entropy(logits, y), on_step=False, on_epoch=True)
        return logits

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams["lr"])
