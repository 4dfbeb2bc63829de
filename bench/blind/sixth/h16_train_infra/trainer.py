import copy

import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, schedule, callbacks=(), max_grad_norm=1.0, weight_decay=1e-4):
        self.model = model
        self.schedule = schedule
        self.callbacks = list(callbacks)
        self.max_grad_norm = max_grad_norm
        self.weight_decay = weight_decay
        self.global_step = 0
        self.should_stop = False
        self.best_state = None
        self.val_data = None

    @torch.compile
    def train_step(self, x, y, lr):
        logits = self.model(x)
        loss = F.cross_entropy(logits, y)
        grads = torch.autograd.grad(loss, list(self.model.parameters()))
        total = torch.sqrt(sum(g.pow(2).sum() for g in grads))
        scale = torch.clamp(self.max_grad_norm / (total + 1e-6), max=1.0)
        with torch.no_grad():
            for p, g in zip(self.model.parameters(), grads):
                p.mul_(1 - lr * self.weight_decay).add_(g * scale, alpha=-lr)
        metrics = {"loss": loss.detach(), "lr": lr, "grad_norm": total}
        for cb in self.callbacks:
            cb.on_step_end(self, metrics)
        return metrics

    def validate(self):
        x, y = self.val_data
        with torch.no_grad():
            return F.cross_entropy(self.model(x), y).item()

    def save_checkpoint(self):
        self.best_state = copy.deepcopy(self.model.state_dict())

    def fit(self, batches, epochs):
        for epoch in range(epochs):
            for x, y in batches:
                lr = self.schedule(self.global_step)
                self.train_step(x, y, lr)
                self.global_step += 1
            for cb in self.callbacks:
                cb.on_epoch_end(self, epoch)
            if self.should_stop:
                break
