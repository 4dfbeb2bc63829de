"""Stateful metrics (torchmetrics-like) and early stopping around a compiled evaluation step."""
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F


class Metric:
    def __init__(self):
        self._defaults = {}
        self._update_count = 0

    def add_state(self, name, default):
        self._defaults[name] = default.clone() if torch.is_tensor(default) else default
        setattr(self, name, default.clone() if torch.is_tensor(default) else default)

    def reset(self):
        self._update_count = 0
        for name, default in self._defaults.items():
            if torch.is_tensor(default):
                setattr(self, name, default.clone())
            elif isinstance(default, list):
                setattr(self, name, [])
            else:
                setattr(self, name, default)

    def __call__(self, *args, **kwargs):
        self._update_count += 1
        return self.update(*args, **kwargs)


class MulticlassAccuracy(Metric):
    def __init__(self, num_classes, top_k=1):
        super().__init__()
        self.num_classes = num_classes
        self.top_k = top_k
        self.add_state("correct", torch.tensor(0))
        self.add_state("total", 0)

    def update(self, preds, target):
        if preds.ndim == target.ndim + 1:
            preds = preds.topk(self.top_k, dim=-1).indices
        else:
            preds = preds.unsqueeze(-1)
        self.correct += (preds == target.unsqueeze(-1)).any(-1).sum()
        self.total += target.numel()

    def compute(self):
        return self.correct.float() / max(self.total, 1)


class MeanMetric(Metric):
    def __init__(self):
        super().__init__()
        self.add_state("values", [])

    def update(self, value, weight=1.0):
        self.values.append(value.detach() * weight)

    def compute(self):
        return torch.stack(self.values).mean() if self.values else torch.tensor(float("nan"))


class EarlyStopping:
    def __init__(self, monitor="val_acc", patience=2, min_delta=0.0, mode="max"):
        self.monitor, self.patience, self.min_delta, self.mode = monitor, patience, min_delta, mode
        self.wait = 0
        self.best = None
        self.should_stop = False

    def step(self, logs):
        current = logs[self.monitor]
        better = self.best is None or (current > self.best + self.min_delta if self.mode == "max"
                                       else current < self.best - self.min_delta)
        if better:
            self.best, self.wait = current, 0
        else:
            self.wait += 1
            self.should_stop = self.wait >= self.patience
        return self.should_stop


class Classifier(nn.Module):
    def __init__(self, dim=16, classes=5):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, classes))

    def forward(self, x):
        return self.body(x)


def main():
    torch.manual_seed(0)
    model = Classifier()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    top1, top3, val_loss = MulticlassAccuracy(5), MulticlassAccuracy(5, top_k=3), MeanMetric()

    @torch.compile
    def eval_step(x, y):
        logits = model(x)
        top1(logits, y)
        top3(logits, y)
        val_loss(F.cross_entropy(logits, y), weight=x.shape[0] / 8)

    stopper = EarlyStopping(patience=2)
    history = defaultdict(list)
    val_set = [(torch.randn(8, 16), torch.randint(0, 5, (8,))), (torch.randn(5, 16), torch.randint(0, 5, (5,)))]
    for epoch in range(4):
        model.train()
        for _ in range(2):
            x, y = torch.randn(8, 16), torch.randint(0, 5, (8,))
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        for m in (top1, top3, val_loss):
            m.reset()
        with torch.no_grad():
            for x, y in val_set:
                eval_step(x, y)
        logs = {"val_acc": top1.compute().item(), "val_top3": top3.compute().item(), "val_loss": val_loss.compute().item()}
        for k, v in logs.items():
            history[k].append(v)
        print(epoch, {k: round(v, 3) for k, v in logs.items()})
        if stopper.step(logs):
            print("early stopping at epoch", epoch)
            break


if __name__ == "__main__":
    main()
