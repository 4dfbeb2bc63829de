"""Evaluation metrics: a running tracker updated from inside the compiled eval step, plus report formatting."""
import json

import torch
import torch.nn as nn


class RunningMetrics:
    def __init__(self):
        self.n = 0
        self.correct = 0
        self.loss_sum = 0.0
        self.losses = []

    def update(self, logits, target, loss):
        self.n += target.numel()
        self.correct += (logits.argmax(-1) == target).sum().item()
        self.loss_sum += float(loss) * target.numel()
        self.losses.append(loss.detach())

    def report(self):
        return json.dumps({"acc": self.correct / max(self.n, 1), "loss": self.loss_sum / max(self.n, 1)})


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 4))

    def forward(self, x):
        return self.net(x)


def eval_step(model, metrics, x, y):
    logits = model(x)
    loss = nn.functional.cross_entropy(logits, y)
    metrics.update(logits, y, loss)
    return loss


def format_loss(loss, step):
    line = f"step {step}: loss={loss}"
    return loss * 1.0, line


class TopK:
    def __init__(self, ks=(1, 3)):
        self.ks = ks
        self.hits = {k: torch.zeros(()) for k in ks}

    def __call__(self, logits, y):
        top = logits.topk(max(self.ks), dim=-1).indices
        for k in self.ks:
            self.hits[k] += (top[:, :k] == y[:, None]).any(-1).float().sum()
        return {k: v.clone() for k, v in self.hits.items()}


def main():
    torch.manual_seed(0)
    model = Classifier()
    metrics = RunningMetrics()
    step = torch.compile(eval_step, backend="eager")
    for _ in range(2):
        step(model, metrics, torch.randn(8, 6), torch.randint(0, 4, (8,)))
    metrics.report()

    fmt = torch.compile(format_loss, backend="eager")
    fmt(torch.tensor(0.5), 1)
    fmt(torch.tensor(0.4), 2)

    tk = TopK()
    c = torch.compile(tk.__call__, backend="eager")
    c(torch.randn(5, 6), torch.randint(0, 6, (5,)))
    c(torch.randn(5, 6), torch.randint(0, 6, (5,)))
