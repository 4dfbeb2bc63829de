import logging
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)


@dataclass
class TrainConfig:
    lr: float = 1e-3
    weight_decay: float = 0.05
    grad_clip: float = 1.0
    accum_steps: int = 2
    log_every: int = 2
    label_smoothing: float = 0.1
    amp: bool = False


class MLPMixerBlock(nn.Module):
    def __init__(self, tokens, dim, expansion=2):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.token_mlp = nn.Sequential(nn.Linear(tokens, tokens * expansion), nn.GELU(), nn.Linear(tokens * expansion, tokens))
        self.norm2 = nn.LayerNorm(dim)
        self.channel_mlp = nn.Sequential(nn.Linear(dim, dim * expansion), nn.GELU(), nn.Linear(dim * expansion, dim))

    def forward(self, x):
        x = x + self.token_mlp(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channel_mlp(self.norm2(x))


class Mixer(nn.Module):
    def __init__(self, tokens=16, dim=32, depth=2, num_classes=10):
        super().__init__()
        self.stem = nn.Linear(12, dim)
        self.blocks = nn.Sequential(*[MLPMixerBlock(tokens, dim) for _ in range(depth)])
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)).mean(1))


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0.0
        self.avg = 0.0
        self.sum = 0.0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def train_step(model, optimizer, batch, step: int, cfg: TrainConfig, meter: AverageMeter):
    inputs, targets = batch
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=cfg.amp):
        logits = model(inputs)
        loss = F.cross_entropy(logits, targets, label_smoothing=cfg.label_smoothing)
    loss = loss / cfg.accum_steps
    loss.backward()
    if (step + 1) % cfg.accum_steps == 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    meter.update(loss.item() * cfg.accum_steps, inputs.size(0))
    if step % cfg.log_every == 0:
        logger.info("step %d loss %.4f (avg %.4f)", step, meter.val, meter.avg)
    return loss.detach()


def main():
    torch.manual_seed(0)
    cfg = TrainConfig()
    model = Mixer()
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    step_fn = torch.compile(train_step)
    meter = AverageMeter()
    for step in range(4):
        batch = (torch.randn(8, 16, 12), torch.randint(0, 10, (8,)))
        step_fn(model, optimizer, batch, step, cfg, meter)


if __name__ == "__main__":
    main()
