"""Validation loop with early stopping: the compiled validation step converts tensors to Python numbers."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class EarlyStopping:
    def __init__(self, patience=2, min_delta=1e-3):
        self.patience, self.min_delta = patience, min_delta
        self.best, self.bad_epochs = math.inf, 0

    def step(self, metric):
        if metric < self.best - self.min_delta:
            self.best, self.bad_epochs = metric, 0
            return False
        self.bad_epochs += 1
        return self.bad_epochs > self.patience


class TabularNet(nn.Module):
    def __init__(self, n_cont=6, cat_cards=(5, 9), n_classes=3):
        super().__init__()
        self.embs = nn.ModuleList([nn.Embedding(c, 4) for c in cat_cards])
        self.bn = nn.BatchNorm1d(n_cont)
        self.mlp = nn.Sequential(nn.Linear(n_cont + 4 * len(cat_cards), 32), nn.ReLU(), nn.Dropout(0.1),
                                 nn.Linear(32, n_classes))

    def forward(self, x_cat, x_cont):
        e = [emb(x_cat[:, i]) for i, emb in enumerate(self.embs)]
        return self.mlp(torch.cat(e + [self.bn(x_cont)], 1))


def validation_step(model, x_cat, x_cont, y, n_classes):
    logits = model(x_cat, x_cont)
    loss = F.cross_entropy(logits, y)
    if not bool(torch.isfinite(loss)):
        raise FloatingPointError("non-finite validation loss")
    preds = logits.argmax(-1)
    correct = int((preds == y).sum())
    per_class = torch.bincount(preds, minlength=n_classes).tolist()
    return {"val_loss": loss.item(), "correct": correct, "pred_hist": per_class, "n": y.shape[0]}


def main():
    torch.manual_seed(0)
    model = TabularNet()
    val_step = torch.compile(validation_step)
    stopper = EarlyStopping()
    batches = [(torch.stack([torch.randint(0, 5, (32,)), torch.randint(0, 9, (32,))], 1),
                torch.randn(32, 6), torch.randint(0, 3, (32,))) for _ in range(3)]
    model.eval()
    with torch.no_grad():
        for epoch in range(3):
            stats = [val_step(model, xc, xn, y, 3) for xc, xn, y in batches]
            val_loss = sum(s["val_loss"] * s["n"] for s in stats) / sum(s["n"] for s in stats)
            acc = sum(s["correct"] for s in stats) / sum(s["n"] for s in stats)
            assert 0.0 <= acc <= 1.0
            if stopper.step(val_loss):
                break


if __name__ == "__main__":
    main()
