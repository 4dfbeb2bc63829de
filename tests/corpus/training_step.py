"""A compiled training step with the usual bookkeeping, and weight-averaging wrappers (EMA)."""
import copy
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)
GLOBAL_STEP = 0
LOSS_HISTORY = []


class MLP(nn.Module):
    def __init__(self, dim: int = 8, hidden: int = 16, classes: int = 3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Dropout(0.1), nn.Linear(hidden, classes))

    def forward(self, x):  # expect: DYN504
        return self.net(x)


@torch.compile
def train_step(model, x, y):
    global GLOBAL_STEP
    start = time.perf_counter()  # expect: DYN307
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    if not torch.isfinite(loss):  # expect: DYN101
        logger.warning("non-finite loss")  # expect: DYN302
    loss.backward()  # expect: DYN315
    GLOBAL_STEP += 1  # expect: DYN305
    logger.info("step %d took %.3fs", GLOBAL_STEP, time.perf_counter() - start)  # expect: DYN302, DYN307
    return loss.detach()


@torch.compile
def forward_and_loss(model, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits, y, label_smoothing=0.1)
    correct = (logits.argmax(-1) == y).sum()  # ok
    LOSS_HISTORY.append(loss.detach())  # expect: DYN305
    return loss, correct


def fit(model, batches):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in batches:
        opt.zero_grad()
        loss, correct = forward_and_loss(model, x, y)
        loss.backward()
        opt.step()
        if len(LOSS_HISTORY) > 100:
            LOSS_HISTORY.clear()
    return loss

class SmallNet(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, 2)

    def forward(self, x):
        return self.fc2(self.fc1(x).relu())


class EMATeacher(nn.Module):
    """Student and teacher in one module; the teacher is refreshed inside forward."""

    def __init__(self, decay: float = 0.99):
        super().__init__()
        self.student = SmallNet()
        self.decay = decay
        self.options = {"decay": decay, "warmup": [10, 20]}

    def forward(self, x):
        teacher = copy.deepcopy(self.student)  # expect: DYN304
        settings = copy.deepcopy(self.options)  # ok
        with torch.no_grad():  # ok
            for t, s in zip(teacher.parameters(), self.student.parameters()):
                t.mul_(settings["decay"]).add_(s, alpha=1 - settings["decay"])
        return self.student(x), teacher(x).detach()


class BufferedEMA(nn.Module):
    """The compile-friendly version: shadow weights are buffers updated in place."""

    def __init__(self, decay: float = 0.99):
        super().__init__()
        self.model = SmallNet()
        self.decay = decay
        self.register_buffer("updates", torch.zeros((), dtype=torch.long))
        for name, p in self.model.named_parameters():
            self.register_buffer("shadow_" + name.replace(".", "_"), p.detach().clone())

    def forward(self, x):
        out = self.model(x)
        with torch.no_grad():
            self.updates += 1  # ok
            d = self.decay * (1 - torch.exp(-self.updates.float() / 10))
            self.shadow_fc1_weight.lerp_(self.model.fc1.weight, 1 - d)
        return out


class CountingWrapper(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.calls = 0
        self.last_shape = None

    def forward(self, x):
        self.calls += 1  # expect: DYN306
        self.last_shape = tuple(x.shape)  # ok
        return self.inner(x)


def train_epoch(model, batches, opt):
    model.train()
    for x, y in batches:
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()


@torch.no_grad()
def evaluate(model, batches):
    model.eval()
    return sum((model(x).argmax(-1) == y).sum() for x, y in batches)


def train_and_evaluate(model, batches, epochs=2):
    compiled = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        train_epoch(compiled, batches, opt)  # ok
        evaluate(compiled, batches)
    return compiled


def __dynlint_calls__():
    torch.manual_seed(0)
    model = MLP()
    batches = [(torch.randn(4, 8), torch.tensor([0, 1, 2, 0])) for _ in range(3)]
    for x, y in batches:
        train_step(model, x, y)
    train_step(model, torch.full((4, 8), float("nan")), batches[0][1])   # the non-finite branch
    fit(model, batches)
    x = torch.randn(3, 8)
    torch.compile(EMATeacher())(x)
    ema = torch.compile(BufferedEMA())
    for _ in range(3):
        ema(x)
    wrapped = torch.compile(CountingWrapper(SmallNet()))
    for _ in range(3):
        wrapped(x)
    train_and_evaluate(MLP(), batches)
