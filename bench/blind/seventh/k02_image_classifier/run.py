from dataclasses import dataclass

import torch
import torch.nn.functional as F

from .model import build_model


@dataclass
class TrainConfig:
    num_classes: int = 10
    width: int = 8
    dropout: float = 0.1
    lr: float = 0.05
    batch_size: int = 8
    epochs: int = 2
    label_smoothing: float = 0.1


def make_loader(n, batch_size, seed):
    g = torch.Generator().manual_seed(seed)
    xs = torch.randn(n, 3, 16, 16, generator=g)
    ys = torch.randint(0, 10, (n,), generator=g)
    for i in range(0, n, batch_size):
        yield xs[i:i + batch_size], ys[i:i + batch_size]


def train_one_epoch(model, opt, cfg, epoch):
    model.train()
    total = 0.0
    for x, y in make_loader(20, cfg.batch_size, seed=epoch):
        logits = model(x)
        loss = F.cross_entropy(logits, y, label_smoothing=cfg.label_smoothing)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        total += loss.item()
    return total


@torch.no_grad()
def evaluate(model, cfg):
    model.eval()
    correct, n, feats_all = 0, 0, []
    for x, y in make_loader(12, cfg.batch_size, seed=100):
        logits, feats = model(x, return_features=True)
        correct += (logits.argmax(1) == y).sum().item()
        n += y.numel()
        feats_all.append(feats)
    return correct / n, torch.cat(feats_all)


def main():
    torch.manual_seed(0)
    cfg = TrainConfig()
    model = build_model(cfg)
    opt = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=0.9)
    for epoch in range(cfg.epochs):
        train_one_epoch(model, opt, cfg, epoch)
        acc, feats = evaluate(model, cfg)
    print("acc", acc, feats.shape)
