"""Training with a YOLO-style model EMA, checkpoint callback and warmup bias LR."""
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def de_parallel(model):
    return model.module if hasattr(model, "module") else model


class ModelEMA:
    """Exponential moving average of model weights with a ramped decay."""

    def __init__(self, model, decay=0.9999, tau=20, updates=0):
        self.ema = copy.deepcopy(de_parallel(model)).eval()
        self.updates = updates
        self.decay = lambda x: decay * (1 - math.exp(-x / tau))
        for p in self.ema.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def update(self, model):
        self.updates += 1
        d = self.decay(self.updates)
        msd = de_parallel(model).state_dict()
        for k, v in self.ema.state_dict().items():
            if v.dtype.is_floating_point:
                v *= d
                v += (1 - d) * msd[k].detach()


class BestCheckpoint:
    def __init__(self, monitor="val_loss", mode="min"):
        self.monitor = monitor
        self.mode = mode
        self.best = math.inf if mode == "min" else -math.inf
        self.best_state = None

    def on_validation_end(self, metrics, ema_model):
        value = metrics[self.monitor]
        improved = value < self.best if self.mode == "min" else value > self.best
        if improved:
            self.best = value
            self.best_state = {k: v.clone() for k, v in ema_model.state_dict().items()}
        return improved


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        x = F.silu(self.bn(self.conv(x)))
        return self.head(x.mean(dim=(2, 3)))


def warmup_lr(optimizer, it, warmup_iters, base_lr, warmup_bias_lr=0.1):
    xi = [0, warmup_iters]
    for j, group in enumerate(optimizer.param_groups):
        start = warmup_bias_lr if j == 2 else 0.0
        group["lr"] = float(torch.tensor(it, dtype=torch.float).clamp(max=warmup_iters).item() / warmup_iters
                            * (base_lr - start) + start) if it < xi[1] else base_lr


def build_optimizer(model, lr):
    g_bn, g_w, g_b = [], [], []
    for m in model.modules():
        if hasattr(m, "bias") and isinstance(m.bias, nn.Parameter):
            g_b.append(m.bias)
        if isinstance(m, nn.BatchNorm2d):
            g_bn.append(m.weight)
        elif hasattr(m, "weight") and isinstance(m.weight, nn.Parameter):
            g_w.append(m.weight)
    opt = torch.optim.SGD(g_bn, lr=lr, momentum=0.9, nesterov=True)
    opt.add_param_group({"params": g_w, "weight_decay": 5e-4})
    opt.add_param_group({"params": g_b})
    return opt


def main():
    torch.manual_seed(0)
    model = Net()
    ema = ModelEMA(model)
    ema.update = torch.compile(ema.update)
    train_model = torch.compile(model)
    eval_model = torch.compile(ema.ema)
    optimizer = build_optimizer(model, lr=0.01)
    ckpt = BestCheckpoint()
    val_x, val_y = torch.randn(6, 3, 8, 8), torch.randint(0, 4, (6,))

    it = 0
    for epoch in range(2):
        model.train()
        for _ in range(3):
            warmup_lr(optimizer, it, warmup_iters=4, base_lr=0.01)
            x, y = torch.randn(4, 3, 8, 8), torch.randint(0, 4, (4,))
            loss = F.cross_entropy(train_model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            ema.update(model)
            it += 1
        with torch.no_grad():
            val_loss = F.cross_entropy(eval_model(val_x), val_y).item()
        improved = ckpt.on_validation_end({"val_loss": val_loss}, ema.ema)
        print(f"epoch {epoch} val_loss {val_loss:.4f} improved={improved} ema_updates={ema.updates}")


if __name__ == "__main__":
    main()
