"""Streaming classification metrics (accuracy, confusion matrix, running loss) with a compiled update()."""
import logging

import torch

logger = logging.getLogger("metrics")


class ClassificationMeter:
    def __init__(self, num_classes, name="val"):
        self.num_classes = num_classes
        self.name = name
        self.reset()

    def reset(self):
        self.confmat = torch.zeros(self.num_classes, self.num_classes, dtype=torch.long)
        self.correct = 0
        self.total = 0
        self.loss_sum = 0.0
        self.batch_losses = []

    @torch.compile(backend="eager")
    def update(self, logits, target, loss=None):
        pred = logits.argmax(dim=1)
        idx = target * self.num_classes + pred
        self.confmat += torch.bincount(idx, minlength=self.num_classes ** 2).view(self.num_classes, self.num_classes)
        self.correct += (pred == target).sum().item()
        self.total += target.numel()
        if loss is not None:
            self.loss_sum += loss.item() * target.numel()
            self.batch_losses.append(loss.detach())
        logger.debug("%s batch acc %.3f", self.name, self.correct / max(self.total, 1))

    def compute(self):
        cm = self.confmat.float()
        per_class_recall = cm.diag() / cm.sum(1).clamp(min=1)
        return {
            "acc": self.correct / max(self.total, 1),
            "balanced_acc": per_class_recall.mean().item(),
            "loss": self.loss_sum / max(self.total, 1),
        }


def main():
    torch.manual_seed(0)
    meter = ClassificationMeter(4)
    for bs in (8, 8, 5):
        logits = torch.randn(bs, 4)
        target = torch.randint(0, 4, (bs,))
        loss = torch.nn.functional.cross_entropy(logits, target)
        meter.update(logits, target, loss)
    meter.update(torch.randn(8, 4), torch.randint(0, 4, (8,)))
    return meter.compute()
