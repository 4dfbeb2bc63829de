"""Small hyperparameter sweep over activation functions and dropout rates for a tabular MLP."""
import itertools

import torch
import torch.nn.functional as F


def init_params(d_in, hidden, d_out, seed):
    g = torch.Generator().manual_seed(seed)
    return {
        "w1": (torch.randn(d_in, hidden, generator=g) / d_in ** 0.5).requires_grad_(),
        "b1": torch.zeros(hidden, requires_grad=True),
        "w2": (torch.randn(hidden, d_out, generator=g) / hidden ** 0.5).requires_grad_(),
        "b2": torch.zeros(d_out, requires_grad=True),
    }


def forward(params, x, activation="relu", dropout=0.0, training=True):
    h = x @ params["w1"] + params["b1"]
    h = getattr(F, activation)(h)
    h = F.dropout(h, dropout, training)
    return h @ params["w2"] + params["b2"]


def run_trial(fwd, activation, dropout, x, y, steps=2, lr=0.1):
    params = init_params(x.shape[1], 16, 2, seed=0)
    for _ in range(steps):
        loss = F.cross_entropy(fwd(params, x, activation=activation, dropout=dropout), y)
        grads = torch.autograd.grad(loss, list(params.values()))
        with torch.no_grad():
            for p, g in zip(params.values(), grads):
                p -= lr * g
    preds = fwd(params, x, activation).argmax(-1)
    return (preds == y).float().mean().item()


def main():
    torch.manual_seed(0)
    x = torch.randn(32, 6)
    y = (x[:, 0] * x[:, 1] > 0).long()
    fwd = torch.compile(forward)
    results = {}
    for act, p in itertools.product(["relu", "gelu", "silu", "tanh", "elu"], [0.0, 0.1]):
        results[(act, p)] = run_trial(fwd, act, p, x, y)
    print(max(results, key=results.get))


if __name__ == "__main__":
    main()
