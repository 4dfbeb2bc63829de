import torch

from . import losses


class Criterion:
    def __init__(self, weights):
        self.weights = weights

    def __call__(self, outputs, targets):
        total = 0.0
        parts = {}
        for name, w in self.weights.items():
            fn = getattr(losses, name)
            parts[name] = fn(*outputs[name], **targets.get(name, {})) if name in targets else fn(*outputs[name])
            total = total + w * parts[name]
        return total, parts


def main():
    torch.manual_seed(0)
    logits = torch.randn(6, 4)
    target = torch.randint(0, 4, (6,))

    fl = torch.compile(losses.focal_loss, backend="eager")
    fl(logits, target)
    fl(logits, target, reduction="sum")
    fl(logits, target, gamma=1.0, reduction="none")

    dl = torch.compile(losses.dice_loss, backend="eager")
    dl(torch.rand(2, 8, 8), (torch.rand(2, 8, 8) > 0.5).float())
    dl(torch.rand(2, 8, 8), (torch.rand(2, 8, 8) > 0.5).float())

    crit = Criterion({"label_smoothing_ce": 1.0, "info_nce": 0.5})
    c = torch.compile(crit.__call__, backend="eager")
    outs = {"label_smoothing_ce": (logits, target), "info_nce": (torch.randn(4, 8), torch.randn(4, 8))}
    c(outs, {})
    crit.weights["info_nce"] = 0.25
    c(outs, {})

    hn = torch.compile(losses.hard_negative_mining, backend="eager")
    hn(torch.rand(20))
    hn(torch.rand(20))
