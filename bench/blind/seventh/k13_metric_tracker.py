"""Streaming classification metrics kept as module buffers and updated every batch."""
import torch
import torch.nn as nn


class ClassificationMetrics(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.num_classes = num_classes
        self.register_buffer("confusion", torch.zeros(num_classes, num_classes, dtype=torch.long))
        self.register_buffer("loss_sum", torch.zeros(()))
        self.num_batches = 0

    def forward(self, logits, target, loss):
        pred = logits.argmax(-1)
        idx = target * self.num_classes + pred
        self.confusion += torch.bincount(idx, minlength=self.num_classes ** 2).view(self.num_classes, -1)
        self.loss_sum += loss.detach()
        self.num_batches += 1
        return pred

    def compute(self):
        cm = self.confusion.float()
        tp = cm.diag()
        precision = tp / cm.sum(0).clamp(min=1)
        recall = tp / cm.sum(1).clamp(min=1)
        f1 = 2 * precision * recall / (precision + recall).clamp(min=1e-8)
        return {
            "accuracy": (tp.sum() / cm.sum()).item(),
            "macro_f1": f1.mean().item(),
            "loss": (self.loss_sum / self.num_batches).item(),
        }

    def reset(self):
        self.confusion.zero_()
        self.loss_sum.zero_()
        self.num_batches = 0


def main():
    torch.manual_seed(0)
    clf = nn.Linear(10, 4)
    metrics = ClassificationMetrics(4)
    update = torch.compile(metrics)
    compute = torch.compile(metrics.compute)
    for epoch in range(2):
        metrics.reset()
        for _ in range(4):
            x, y = torch.randn(16, 10), torch.randint(0, 4, (16,))
            with torch.no_grad():
                logits = clf(x)
                loss = nn.functional.cross_entropy(logits, y)
            update(logits, y, loss)
        print(epoch, compute())


if __name__ == "__main__":
    main()
