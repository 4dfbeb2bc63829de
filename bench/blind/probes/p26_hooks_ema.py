"""Activation-statistics forward hooks + EMA teacher (deepcopy) around a compiled student model."""
import copy
from collections import defaultdict

import torch
import torch.nn as nn


class ActivationStats:
    """Registers hooks that record mean |activation| and dead-ReLU fraction per layer."""

    def __init__(self, model, layer_types=(nn.ReLU,)):
        self.stats = defaultdict(list)
        self.handles = []
        for name, m in model.named_modules():
            if isinstance(m, layer_types):
                self.handles.append(m.register_forward_hook(self._make_hook(name)))

    def _make_hook(self, name):
        def hook(module, inputs, output):
            self.stats[name].append({
                "mean_abs": output.abs().mean().item(),
                "dead": (output == 0).float().mean().item(),
            })
        return hook

    def remove(self):
        for h in self.handles:
            h.remove()


class Student(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
        self.head = nn.Linear(32, 3)

    def forward(self, x):
        return self.head(self.features(x))


class EMA:
    def __init__(self, model, decay=0.99):
        self.decay = decay
        self.shadow = copy.deepcopy(model).eval()
        for p in self.shadow.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def update(self, model):
        for s, p in zip(self.shadow.parameters(), model.parameters()):
            s.lerp_(p, 1 - self.decay)


@torch.compile
def distill_loss(student_logits, teacher_logits, labels, T=2.0, alpha=0.5):
    kd = nn.functional.kl_div(
        nn.functional.log_softmax(student_logits / T, -1),
        nn.functional.softmax(teacher_logits / T, -1), reduction="batchmean") * T * T
    ce = nn.functional.cross_entropy(student_logits, labels)
    return alpha * kd + (1 - alpha) * ce


def main():
    torch.manual_seed(0)
    student = Student()
    ema = EMA(student)
    monitor = ActivationStats(student)
    model = torch.compile(student)
    opt = torch.optim.SGD(student.parameters(), lr=0.1)
    for step in range(3):
        x, y = torch.randn(8, 10), torch.randint(0, 3, (8,))
        with torch.no_grad():
            t_logits = ema.shadow(x)
        loss = distill_loss(model(x), t_logits, y, alpha=0.5 if step < 2 else 0.9)
        opt.zero_grad()
        loss.backward()
        opt.step()
        ema.update(student)
    monitor.remove()
    return {k: v[-1] for k, v in monitor.stats.items()}


if __name__ == "__main__":
    print(main())
