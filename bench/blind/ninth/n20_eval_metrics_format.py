"""Validation loop for a text classifier: a compiled eval step that also builds the log line."""
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class CNNTextClassifier(nn.Module):
    """Kim (2014) CNN for sentence classification."""

    def __init__(self, vocab=100, emb=16, n_filters=8, kernel_sizes=(2, 3, 4), n_classes=4, dropout=0.3):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb, padding_idx=0)
        self.convs = nn.ModuleList([nn.Conv1d(emb, n_filters, k) for k in kernel_sizes])
        self.dropout = nn.Dropout(dropout)
        self.fc = nn.Linear(n_filters * len(kernel_sizes), n_classes)

    def forward(self, tokens):
        x = self.embedding(tokens).transpose(1, 2)
        pooled = [F.relu(conv(x)).max(dim=2).values for conv in self.convs]
        return self.fc(self.dropout(torch.cat(pooled, dim=1)))


def confusion_matrix(preds, targets, n_classes):
    idx = targets * n_classes + preds
    return np.bincount(idx, minlength=n_classes * n_classes).reshape(n_classes, n_classes)


@torch.compile
def eval_step(model, tokens, labels, n_classes: int = 4):
    logits = model(tokens)
    loss = F.cross_entropy(logits, labels)
    preds = logits.argmax(dim=-1)
    acc = (preds == labels).float().mean()
    cm = confusion_matrix(preds.cpu().numpy(), labels.cpu().numpy(), n_classes)
    line = f"val_loss={loss:.4f} val_acc={acc:.3f}"
    return loss, cm, line


def main():
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    model = CNNTextClassifier().eval()
    total_cm = np.zeros((4, 4), dtype=np.int64)
    lines = []
    with torch.no_grad():
        for b in range(4):
            tokens = torch.randint(1, 100, (8, 20))
            labels = torch.randint(0, 4, (8,))
            loss, cm, line = eval_step(model, tokens, labels)
            total_cm += cm
            lines.append(line)
    return int(np.trace(total_cm)), lines[-1]


if __name__ == "__main__":
    print(main())
