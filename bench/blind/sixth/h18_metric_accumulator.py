"""Streaming classification metrics (confusion-matrix based) computed inside the eval step."""
import torch
import torch.nn as nn


class ConfusionMatrix(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.num_classes = num_classes
        self.register_buffer("mat", torch.zeros(num_classes, num_classes, dtype=torch.long))

    def update(self, preds, target):
        assert preds.shape == target.shape
        onehot_t = nn.functional.one_hot(target, self.num_classes)
        onehot_p = nn.functional.one_hot(preds, self.num_classes)
        self.mat += onehot_t.T @ onehot_p

    def compute(self):
        mat = self.mat.float()
        tp = mat.diag()
        precision = tp / mat.sum(0).clamp(min=1)
        recall = tp / mat.sum(1).clamp(min=1)
        f1 = 2 * precision * recall / (precision + recall).clamp(min=1e-12)
        return {
            "accuracy": tp.sum() / mat.sum().clamp(min=1),
            "macro_f1": f1.mean(),
            "per_class_recall": recall,
        }

    def reset(self):
        self.mat.zero_()


class Classifier(nn.Module):
    def __init__(self, d_in=20, n_classes=6):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, 32), nn.ReLU(), nn.Linear(32, n_classes))

    def forward(self, x):
        return self.net(x)


class Evaluator:
    def __init__(self, model, num_classes):
        self.model = model
        self.metric = ConfusionMatrix(num_classes)

    @torch.compile
    def eval_step(self, x, y):
        logits = self.model(x)
        preds = logits.argmax(-1)
        self.metric.update(preds, y)
        loss = nn.functional.cross_entropy(logits, y, reduction="sum")
        return loss

    def run(self, loader):
        self.metric.reset()
        total_loss, n = torch.zeros(()), 0
        with torch.no_grad():
            for x, y in loader:
                total_loss += self.eval_step(x, y)
                n += x.shape[0]
        out = self.metric.compute()
        out["loss"] = total_loss / n
        return out


def make_loader(n, batch_size, gen):
    x = torch.randn(n, 20, generator=gen)
    y = (x[:, :6].argmax(-1) + (torch.rand(n, generator=gen) < 0.2).long()) % 6
    return [(x[i:i + batch_size], y[i:i + batch_size]) for i in range(0, n, batch_size)]


def main():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    ev = Evaluator(Classifier(), 6)
    loader = make_loader(100, 32, gen)
    history = [ev.run(loader) for _ in range(2)]
    return [h["macro_f1"] for h in history]
