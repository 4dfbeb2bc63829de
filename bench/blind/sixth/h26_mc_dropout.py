"""Bayesian regression with MC dropout: predictive mean/variance and an active-learning pick."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DropoutMLP(nn.Module):
    def __init__(self, d_in=1, hidden=64, p=0.2):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, 2)  # mean and log-variance
        self.p = p

    def forward(self, x):
        x = F.dropout(F.relu(self.fc1(x)), self.p, self.training)
        x = F.dropout(F.relu(self.fc2(x)), self.p, self.training)
        mu, log_var = self.out(x).unbind(-1)
        return mu, log_var


def gaussian_nll(mu, log_var, y):
    return 0.5 * (log_var + (y - mu) ** 2 / log_var.exp()).mean()


@torch.compile
def mc_predict(model, x, n_samples, seed=None):
    if seed is not None:
        torch.manual_seed(seed)
    mus, vars_ = [], []
    for _ in range(n_samples):
        mu, log_var = model(x)
        mus.append(mu)
        vars_.append(log_var.exp())
    mus = torch.stack(mus)
    aleatoric = torch.stack(vars_).mean(0)
    epistemic = mus.var(0)
    return mus.mean(0), aleatoric + epistemic, epistemic


def toy_data(n, gen):
    x = torch.rand(n, 1, generator=gen) * 6 - 3
    y = torch.sin(x[:, 0]) + 0.1 * torch.randn(n, generator=gen) * (1 + x[:, 0].abs())
    return x, y


def main():
    gen = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    model = DropoutMLP()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    train_fn = torch.compile(model)
    x, y = toy_data(128, gen)
    for _ in range(5):
        mu, log_var = train_fn(x)
        loss = gaussian_nll(mu, log_var, y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    pool = torch.linspace(-4, 4, 50)[:, None]
    with torch.no_grad():
        # quick estimate during the sweep, a reproducible larger one for the report
        _, total_var, epi = mc_predict(model, pool, 4)
        _, total_var, epi = mc_predict(model, pool, 8, seed=123)
        model.eval()
        det_mu, _ = train_fn(pool)
    pick = int(epi.argmax())
    return pick, det_mu.shape
