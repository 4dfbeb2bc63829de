"""A small Lightning-like trainer: callbacks, a global flags dict, train/eval switching, compiled step functions."""
import torch
import torch.nn as nn

FLAGS = {"detect_anomaly": False, "grad_accum": 1, "log_grad_norm": True}


class Callback:
    def on_step_end(self, trainer, outputs):
        pass


class PrintLoss(Callback):
    def __init__(self, every=1):
        self.every = every

    def on_step_end(self, trainer, outputs):
        if trainer.global_step % self.every == 0:
            print(f"step {trainer.global_step}: loss={outputs['loss']:.4f}")


class EarlyStopping(Callback):
    def __init__(self, patience=2):
        self.patience = patience
        self.best = float("inf")
        self.bad = 0

    def on_step_end(self, trainer, outputs):
        if outputs["loss"] < self.best:
            self.best, self.bad = outputs["loss"], 0
        else:
            self.bad += 1
            trainer.should_stop = self.bad >= self.patience


class Trainer:
    def __init__(self, model, optimizer, callbacks=()):
        self.model = model
        self.optimizer = optimizer
        self.callbacks = list(callbacks)
        self.global_step = 0
        self.should_stop = False
        self._train_step = torch.compile(self.training_step, backend="eager")
        self._eval_step = torch.compile(self.validation_step, backend="eager")

    def training_step(self, batch):
        self.model.train()
        x, y = batch
        loss = nn.functional.cross_entropy(self.model(x), y) / FLAGS["grad_accum"]
        loss.backward()
        outputs = {"loss": loss.detach()}
        if FLAGS["log_grad_norm"]:
            outputs["grad_norm"] = torch.norm(torch.stack([p.grad.norm() for p in self.model.parameters()]))
        return outputs

    def validation_step(self, batch):
        self.model.eval()
        x, y = batch
        with torch.no_grad():
            logits = self.model(x)
        return {"val_loss": nn.functional.cross_entropy(logits, y), "val_acc": (logits.argmax(1) == y).float().mean()}

    def fit(self, train_batches, val_batches):
        for i, batch in enumerate(train_batches):
            outputs = self._train_step(batch)
            if (i + 1) % FLAGS["grad_accum"] == 0:
                self.optimizer.step()
                self.optimizer.zero_grad()
            outputs = {k: v.item() for k, v in outputs.items()}
            self.global_step += 1
            for cb in self.callbacks:
                cb.on_step_end(self, outputs)
            if self.should_stop:
                break
        return [self._eval_step(b) for b in val_batches]
