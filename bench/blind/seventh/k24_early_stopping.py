"""Training loop with validation, early stopping and a plateau-based loss-weight callback."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class EarlyStopping:
    def __init__(self, patience=2, min_delta=1e-4):
        self.patience, self.min_delta = patience, min_delta
        self.best = float("inf")
        self.bad_epochs = 0

    def __call__(self, val_loss):
        if val_loss < self.best - self.min_delta:
            self.best = val_loss
            self.bad_epochs = 0
        else:
            self.bad_epochs += 1
        return self.bad_epochs > self.patience


def make_steps(model):
    aux_weight = 0.5

    def train_step(x, y):
        logits, recon = model(x)
        return F.cross_entropy(logits, y) + aux_weight * F.mse_loss(recon, x)

    def set_aux_weight(w):
        nonlocal aux_weight
        aux_weight = w

    def val_step(x, y, best_so_far):
        logits, _ = model(x)
        loss = F.cross_entropy(logits, y)
        improved = loss < best_so_far
        return loss, improved

    return torch.compile(train_step), torch.compile(val_step), set_aux_weight


class AutoEncClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
        self.cls = nn.Linear(16, 3)
        self.dec = nn.Linear(16, 10)

    def forward(self, x):
        h = self.enc(x)
        return self.cls(h), self.dec(h)


def main():
    torch.manual_seed(0)
    model = AutoEncClassifier()
    train_step, val_step, set_aux_weight = make_steps(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    stopper = EarlyStopping()
    xv, yv = torch.randn(32, 10), torch.randint(0, 3, (32,))
    for epoch in range(5):
        for _ in range(2):
            x, y = torch.randn(16, 10), torch.randint(0, 3, (16,))
            loss = train_step(x, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            val_loss, improved = val_step(xv, yv, stopper.best)
        if stopper(val_loss.item()):
            break
        if not improved:
            set_aux_weight(0.5 / (epoch + 2))


if __name__ == "__main__":
    main()
