"""Sequence-classification training with a length curriculum driven by a module-level config."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CURRICULUM = {"max_len": 8, "noise_std": 0.0}


def advance_curriculum(epoch):
    CURRICULUM["max_len"] = min(8 * (epoch + 1), 32)
    CURRICULUM["noise_std"] = 0.05 * epoch


class ConvClassifier(nn.Module):
    def __init__(self, n_feats=6, hidden=16, n_classes=3):
        super().__init__()
        self.conv = nn.Conv1d(n_feats, hidden, 3, padding=1)
        self.head = nn.Linear(hidden, n_classes)

    def forward(self, x):
        h = F.relu(self.conv(x.transpose(1, 2)))
        return self.head(h.mean(-1))


def training_step(model, x, y):
    x = x[:, :CURRICULUM["max_len"]]
    if CURRICULUM["noise_std"] > 0:
        x = x + CURRICULUM["noise_std"] * torch.randn_like(x)
    return F.cross_entropy(model(x), y)


def main():
    torch.manual_seed(0)
    model = ConvClassifier()
    step = torch.compile(training_step)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    xs, ys = torch.randn(32, 32, 6), torch.randint(0, 3, (32,))
    for epoch in range(4):
        advance_curriculum(epoch)
        for i in range(0, 32, 16):
            loss = step(model, xs[i:i + 16], ys[i:i + 16])
            opt.zero_grad()
            loss.backward()
            opt.step()


if __name__ == "__main__":
    main()
