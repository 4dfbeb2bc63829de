"""torchmetrics-style Metric objects: add_state with list states, update() compiled, compute() on demand."""
import torch
import torch.nn as nn


class Metric(nn.Module):
    full_state_update = False

    def __init__(self):
        super().__init__()
        self._defaults = {}
        self._update_count = 0
        self._computed = None

    def add_state(self, name, default, dist_reduce_fx=None):
        self._defaults[name] = default
        setattr(self, name, list(default) if isinstance(default, list) else default.clone())

    def reset(self):
        for name, default in self._defaults.items():
            setattr(self, name, [] if isinstance(default, list) else default.clone())
        self._update_count = 0
        self._computed = None


class MulticlassAUROCLite(Metric):
    def __init__(self, num_classes):
        super().__init__()
        self.num_classes = num_classes
        self.add_state("preds", default=[], dist_reduce_fx="cat")
        self.add_state("target", default=[], dist_reduce_fx="cat")

    def update(self, preds, target):
        self._update_count += 1
        self._computed = None
        preds = preds.softmax(-1) if preds.is_floating_point() else preds
        self.preds.append(preds.detach())
        self.target.append(target.detach())

    def compute(self):
        preds = torch.cat(self.preds)
        target = torch.cat(self.target)
        scores = []
        for c in torch.unique(target).tolist():
            pos = preds[target == c, c]
            neg = preds[target != c, c]
            scores.append((pos[:, None] > neg[None, :]).float().mean())
        return torch.stack(scores).mean()


class MeanSquaredError(Metric):
    def __init__(self):
        super().__init__()
        self.add_state("sum_squared_error", default=torch.tensor(0.0), dist_reduce_fx="sum")
        self.add_state("total", default=torch.tensor(0), dist_reduce_fx="sum")

    def update(self, preds, target):
        self.sum_squared_error += ((preds - target) ** 2).sum()
        self.total += target.numel()

    def compute(self):
        return self.sum_squared_error / self.total


def main():
    torch.manual_seed(0)
    auroc = MulticlassAUROCLite(num_classes=4)
    mse = MeanSquaredError()
    update_auroc = torch.compile(auroc.update)
    update_mse = torch.compile(mse.update)
    compute_auroc = torch.compile(auroc.compute)
    for epoch in range(2):
        for _ in range(4):
            logits = torch.randn(16, 4)
            target = torch.randint(0, 4, (16,))
            update_auroc(logits, target)
            update_mse(logits[:, 0], target.float())
        score = compute_auroc()
        assert 0.0 <= float(score) <= 1.0 and mse.compute() > 0
        auroc.reset()
        mse.reset()


if __name__ == "__main__":
    main()
