"""Values that change between calls of a compiled function in the ways a training or sampling loop changes them,
under real Dynamo: a number the loop carries (`step += 1`, from a size: `pos = prompt.shape[1]` ... `pos += 1`, `eps *= 10`, `eps = max(0.05, eps * 0.5)`, `t += dt` in a `while`, a trainer's `self.step += 1`, also through a
function or module an attribute holds compiled, `self.policy = torch.compile(Policy())`; DYN501), rows of tuples of numbers
(`for size in [(4, 4), (6, 3)]`; DYN501), a list of tuples built from the loop variable and iterated by the
compiled code (guarded where an element is first used; DYN501), a list grown by concatenation (`ws = ws + [w]`; DYN507), an attribute of
a class used as a namespace of settings (`Cfg.temperature = 0.7`; DYN514), a module-level list appended to
(`HOOKS.append(fn)`; DYN514), the ints of a `range` a function of the file returns (`for i, t in enumerate(ts)`;
DYN501), an object handed to the compiled
function whose method advances an attribute it reads (`sched.step()`; DYN514), tuples of another length for one
parameter (DYN505), a list or `*args` tuple whose length the loop variable sets (`[... for i in range(n)]`,
`feats[:k]`, `[x] * n`; DYN507), an object built from the loop variable that keeps it as an attribute (a
dataclass, a class's `__init__`, a named tuple; DYN501, where the attribute is first read), tensors made with each dtype of a loop over dtypes, or given `requires_grad_(i % 2 == 0)`, a number passed to a compiled `functools.partial`
(guarded in the function it wraps), a size of a tensor or list the loop
grows (`tokens.shape[1]` after `torch.cat([tokens, nxt], dim=1)`, `len(history)`; DYN501) (DYN501, at the `def`: a guard on a
tensor's dtype has no line of its own), a number drawn from Python's random generator for each call (DYN501). Each finding stands at the line
Dynamo's recompile log names, and the same code with the value held fixed recompiles nothing and gets none."""
import pytest

from conftest import dynamo_guard_lines, line_of
from dynlint.api import check_source

CARRIED_INT = '''import torch


def train_step(x, step):
    return x * min(1.0, step / 4)


def main():
    opt = torch.compile(train_step, backend="eager")
    x = torch.randn(4)
    step = 0
    for _ in range(3):
        opt(x, step)
        step += 1
'''

CARRIED_FLOAT = '''import torch


def norm(x, eps):
    return x / (x.norm() + eps)


def main():
    opt = torch.compile(norm, backend="eager")
    x = torch.randn(4)
    eps = 1e-6
    for _ in range(3):
        opt(x, eps)
        eps *= 10
'''

TUPLE_ROWS = '''import torch


def resize(x, size):
    h, w = size
    return torch.nn.functional.interpolate(x, size=(h, w)) * (h / w)


def main():
    opt = torch.compile(resize, backend="eager")
    x = torch.randn(1, 1, 8, 8)
    for size in [(4, 4), (6, 3), (5, 5)]:
        opt(x, size)
'''

CONCATENATED = '''import torch


def forward(x, layers):
    for w in layers:
        x = x @ w
    return x


def main():
    opt = torch.compile(forward, backend="eager")
    x = torch.randn(2, 4)
    ws = [torch.randn(4, 4)]
    for _ in range(3):
        opt(x, ws)
        ws = ws + [torch.randn(4, 4)]
'''

NAMESPACE = '''import torch


class Cfg:
    temperature = 1.0


def sample(logits):
    return (logits / Cfg.temperature).softmax(-1)


def main():
    opt = torch.compile(sample, backend="eager")
    x = torch.randn(4)
    opt(x)
    Cfg.temperature = 0.7
    opt(x)
'''


ADVANCED = '''import torch


class Sched:
    def __init__(self):
        self.t = 0

    def step(self):
        self.t += 1


def f(x, sched):
    return x * (0.9 ** sched.t)


def main():
    opt = torch.compile(f, backend="eager")
    s = Sched()
    x = torch.randn(3)
    for _ in range(3):
        opt(x, s)
        s.step()
'''

HOOKS = '''import torch
import torch.nn as nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x, hooks=()):
        y = self.lin(x)
        for h in hooks:
            y = h(y)
        return y


def main():
    m = torch.compile(M(), backend="eager")
    x = torch.randn(2, 4)
    m(x)
    m(x, hooks=(torch.relu,))
    m(x, hooks=(torch.relu, torch.tanh))
'''

DTYPES = '''import torch


def f(x, y):
    return x + y


def main():
    opt = torch.compile(f, backend="eager")
    for dtype in (torch.float32, torch.float64):
        opt(torch.ones(3, dtype=dtype), torch.ones(3, dtype=dtype))
'''

DRAWN = '''import random

import torch


def augment(x, scale):
    return x * scale


def main():
    opt = torch.compile(augment, backend="eager")
    x = torch.randn(4)
    for _ in range(3):
        opt(x, random.uniform(0.5, 1.5))
'''

DECAYED = '''import torch


def act(q, eps):
    greedy = q.argmax(-1)
    random_a = torch.randint(0, q.shape[-1], greedy.shape)
    explore = torch.rand(greedy.shape) < eps
    return torch.where(explore, random_a, greedy)


def main():
    opt = torch.compile(act, backend="eager")
    q = torch.randn(4, 3)
    eps = 1.0
    for _ in range(3):
        opt(q, eps)
        eps = max(0.05, eps * 0.5)
'''

INTEGRATED = '''import torch


def euler(x, t, dt):
    return x + dt * torch.sin(x * t)


def main():
    opt = torch.compile(euler, backend="eager")
    x = torch.randn(4)
    t, dt = 0.0, 0.25
    while t < 1.0:
        x = opt(x, t, dt)
        t += dt
'''

COUNTED = '''import torch


def train_step(x, step):
    return x * (0.5 ** step)


compiled_step = torch.compile(train_step, backend="eager")


class Trainer:
    def __init__(self):
        self.step = 0

    def fit(self, batches):
        for x in batches:
            compiled_step(x, self.step)
            self.step += 1


def main():
    Trainer().fit([torch.randn(3)] * 3)
'''

HELD_FUNCTION = '''import torch


def train_step(x, step):
    return x * (0.5 ** step)


class Trainer:
    def __init__(self):
        self.step = 0
        self.compiled = torch.compile(train_step, backend="eager")

    def fit(self, batches):
        for x in batches:
            self.compiled(x, self.step)
            self.step += 1


def main():
    Trainer().fit([torch.randn(3)] * 3)
'''

HELD_MODULE = '''import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(4, 3)

    def forward(self, obs, eps):
        values = self.q(obs)
        explore = torch.rand(values.shape[0]) < eps
        return torch.where(explore, torch.zeros_like(values[:, 0]).long(), values.argmax(-1))


class Agent:
    def __init__(self):
        self.policy = torch.compile(Policy(), backend="eager")
        self.eps = 1.0

    def run(self, steps):
        obs = torch.randn(2, 4)
        for _ in range(steps):
            self.policy(obs, self.eps)
            self.eps = max(0.05, self.eps * 0.5)


def main():
    Agent().run(3)
'''




STARRED_LENGTH = '''import torch


def stack_sum(*tensors):
    return torch.stack(tensors).sum(0)


def main():
    opt = torch.compile(stack_sum, backend="eager")
    for n in range(1, 4):
        ts = [torch.full((2,), float(i)) for i in range(n)]
        opt(*ts)
'''

SLICED_LENGTH = '''import torch


def cat_all(xs):
    out = xs[0]
    for x in xs[1:]:
        out = out + x
    return out


def main():
    opt = torch.compile(cat_all, backend="eager")
    feats = [torch.randn(2) for _ in range(5)]
    for k in range(2, 5):
        opt(feats[:k])
'''

REPEATED_LENGTH = '''import torch


def mean_of(xs):
    return torch.stack(xs).mean(0)


def main():
    opt = torch.compile(mean_of, backend="eager")
    x = torch.randn(3)
    for n in (2, 3, 4):
        opt([x] * n)
'''

KEPT_DATACLASS = '''from dataclasses import dataclass

import torch


@dataclass
class SamplerConfig:
    temperature: float = 1.0
    top_k: int = 0


def sample_logits(logits, cfg):
    scaled = logits.sin()
    return scaled / cfg.temperature


def main():
    opt = torch.compile(sample_logits, backend="eager")
    x = torch.randn(4)
    for t in (0.5, 1.0, 2.0):
        opt(x, SamplerConfig(temperature=t))
'''

KEPT_INIT = '''import torch


class Affine:
    def __init__(self, scale, shift=0.0):
        self.scale = scale
        self.shift = shift


def apply(x, op):
    y = x.cos()
    return y * op.scale + op.shift


def main():
    opt = torch.compile(apply, backend="eager")
    x = torch.randn(4)
    for s in (0.5, 1.5):
        op = Affine(s)
        opt(x, op)
'''

KEPT_NAMEDTUPLE = '''from collections import namedtuple

import torch

Coefs = namedtuple("Coefs", ["alpha", "beta"])


def mix(x, c):
    y = x.tanh()
    return y * c.alpha + c.beta


def main():
    opt = torch.compile(mix, backend="eager")
    x = torch.randn(4)
    for i in range(3):
        opt(x, Coefs(0.1 * i, 1.0))
'''

GRAD_TOGGLED = '''import torch


def pool(x):
    return x.mean(-1)


def main():
    opt = torch.compile(pool, backend="eager")
    for i in range(3):
        opt(torch.randn(4, 8).requires_grad_(i % 2 == 0))
'''

GROWN_SIZE = '''import torch


def embed(tok, pos):
    return tok.float() * (pos + 1)


def main():
    opt = torch.compile(embed, backend="eager")
    tokens = torch.zeros(1, 1, dtype=torch.long)
    for _ in range(3):
        opt(torch.ones(1, 1), tokens.shape[1])
        tokens = torch.cat([tokens, tokens[:, -1:]], dim=1)
'''

GROWN_LIST = '''import torch


def average(x, n):
    return x / n


def main():
    opt = torch.compile(average, backend="eager")
    history = []
    for step in range(3):
        history.append(step)
        opt(torch.ones(2), len(history))
'''

SIZES_LIST = '''import torch


def crop(images, image_sizes):
    outs = []
    for img, (h, w) in zip(images, image_sizes):
        outs.append(img[..., :h, :w].sum())
    return torch.stack(outs)


def main():
    opt = torch.compile(crop, backend="eager")
    imgs = torch.randn(2, 3, 8, 8)
    for s in (4, 5, 6):
        opt(imgs, [(s, s), (s, 8)])
'''

PARTIAL = '''import functools

import torch


def scaled_sum(x, scale=1.0, dim=0):
    return (x * scale).sum(dim)


def main():
    opt = torch.compile(functools.partial(scaled_sum, dim=-1), backend="eager")
    x = torch.randn(2, 4)
    for s in (0.5, 1.5, 2.5):
        opt(x, scale=s)
'''

GLOBAL_LIST = '''import torch

HOOKS = [torch.relu]


def apply_hooks(x):
    for h in HOOKS:
        x = h(x)
    return x * 2


def main():
    opt = torch.compile(apply_hooks, backend="eager")
    x = torch.randn(4)
    for act in (torch.tanh, torch.sigmoid):
        HOOKS.append(act)
        opt(x)
'''

RETURNED_STEPS = '''import torch


def make_steps(n):
    return list(range(n - 1, -1, -1))


def scale(x, t):
    return x * (t + 1)


def main():
    opt = torch.compile(scale, backend="eager")
    x = torch.randn(4)
    ts = make_steps(3)
    for i, t in enumerate(ts):
        opt(x, t)
'''

CARRIED_FROM_SIZE = '''import torch


def write(cache, k, pos):
    cache[:, pos:pos + 1] = k
    return cache.sum()


def main():
    opt = torch.compile(write, backend="eager")
    prompt = torch.zeros(1, 3)
    cache = torch.zeros(1, 16)
    pos = prompt.shape[1]
    for _ in range(3):
        opt(cache, torch.ones(1, 1), pos)
        pos += 1
'''

INVERSE_OF_STATE = '''import torch


class LossScaler:
    def __init__(self):
        self.scale = 1024.0

    def update(self, overflow):
        self.scale = self.scale / 2 if overflow else self.scale * 2


def unscale(g, inv_scale):
    return g * inv_scale


def main():
    opt = torch.compile(unscale, backend="eager")
    scaler = LossScaler()
    for step in range(3):
        opt(torch.ones(3), 1.0 / scaler.scale)
        scaler.update(step % 2 == 0)
'''

ENUM_ROWS = '''import enum

import torch


class Reduction(enum.Enum):
    MEAN = "mean"
    SUM = "sum"


def loss(x, scale, reduction):
    y = x * scale
    return y.mean() if reduction is Reduction.MEAN else y.sum()


def main():
    opt = torch.compile(loss, backend="eager")
    schedule = [(1.0, Reduction.MEAN), (1.0, Reduction.SUM)]
    for step, (scale, red) in enumerate(schedule):
        opt(torch.ones(3), scale, red)
'''

RECORD_SWEEP = '''import dataclasses
from dataclasses import dataclass

import torch


@dataclass
class BlockConfig:
    act: str = "relu"
    scale: float = 1.0
    bias: float = 0.0


def block(x, cfg):
    y = torch.relu(x) if cfg.act == "relu" else torch.tanh(x)
    return y * cfg.scale + cfg.bias


def main():
    opt = torch.compile(block, backend="eager")
    base = BlockConfig()
    sweep = [base, dataclasses.replace(base, act="tanh", bias=0.5), BlockConfig(scale=2.0)]
    for cfg in sweep:
        opt(torch.randn(4), cfg)
'''

ADAPTIVE_CLIP = '''import torch


def clip(g, max_norm):
    norm = g.norm()
    return g * (max_norm / (norm + 1e-6)).clamp(max=1.0)


def main():
    opt = torch.compile(clip, backend="eager")
    norms = [1.0]
    for _ in range(4):
        g = torch.randn(8)
        max_norm = 2.0 * sorted(norms)[len(norms) // 2]
        opt(g, max_norm)
        norms.append(g.norm().item())
'''

CASES = [
    (CARRIED_INT, "DYN501", "return x * min(1.0, step / 4)", ("        step += 1\n", "")),
    (CARRIED_FLOAT, "DYN501", "return x / (x.norm() + eps)", ("        eps *= 10\n", "")),
    (TUPLE_ROWS, "DYN501", "return torch.nn.functional.interpolate", ("(6, 3), (5, 5)", "(4, 4), (4, 4)")),
    (CONCATENATED, "DYN507", "for w in layers:", ("        ws = ws + [torch.randn(4, 4)]\n", "")),
    (NAMESPACE, "DYN514", "return (logits / Cfg.temperature)", ("    Cfg.temperature = 0.7\n", "")),
    (DECAYED, "DYN501", "explore = torch.rand(greedy.shape) < eps", ("        eps = max(0.05, eps * 0.5)\n", "")),
    (INTEGRATED, "DYN501", "return x + dt * torch.sin(x * t)", ("    while t < 1.0:\n        x = opt(x, t, dt)\n        t += dt\n",
                                                                    "    for _ in range(4):\n        x = opt(x, t, dt)\n")),
    (COUNTED, "DYN501", "return x * (0.5 ** step)", ("            self.step += 1\n", "")),
    (HELD_FUNCTION, "DYN501", "return x * (0.5 ** step)", ("            self.step += 1\n", "")),
    (HELD_MODULE, "DYN501", "explore = torch.rand(values.shape[0]) < eps",
     ("            self.eps = max(0.05, self.eps * 0.5)\n", "")),
    (DRAWN, "DYN501", "return x * scale", ("random.uniform(0.5, 1.5)", "1.0")),
    (DTYPES, "DYN501", "def f(x, y):", ("(torch.float32, torch.float64)", "(torch.float32, torch.float32)")),
    (ADVANCED, "DYN514", "return x * (0.9 ** sched.t)", ("        s.step()\n", "")),
    (HOOKS, "DYN505", "for h in hooks:", ("    m(x, hooks=(torch.relu,))\n    m(x, hooks=(torch.relu, torch.tanh))\n",
                                          "    m(x)\n")),
    (STARRED_LENGTH, "DYN507", "return torch.stack(tensors).sum(0)", ("range(n)]", "range(2)]")),
    (SLICED_LENGTH, "DYN507", "out = xs[0]", ("opt(feats[:k])", "opt(feats[:2])")),
    (REPEATED_LENGTH, "DYN507", "return torch.stack(xs).mean(0)", ("[x] * n", "[x] * 2")),
    (ADAPTIVE_CLIP, "DYN501", "return g * (max_norm", ("        norms.append(g.norm().item())\n", "")),
    (KEPT_DATACLASS, "DYN501", "return scaled / cfg.temperature", ("temperature=t)", "temperature=0.5)")),
    (KEPT_INIT, "DYN501", "return y * op.scale + op.shift", ("Affine(s)", "Affine(0.5)")),
    (KEPT_NAMEDTUPLE, "DYN501", "return y * c.alpha + c.beta", ("Coefs(0.1 * i, 1.0)", "Coefs(0.1, 1.0)")),
    (GRAD_TOGGLED, "DYN501", "def pool(x):", ("requires_grad_(i % 2 == 0)", "requires_grad_(True)")),
    (GROWN_SIZE, "DYN501", "return tok.float() * (pos + 1)", ("tokens.shape[1])", "tokens.shape[0])")),
    (GROWN_LIST, "DYN501", "return x / n", ("        history.append(step)\n", "")),
    (SIZES_LIST, "DYN501", "outs.append(img[..., :h, :w].sum())", ("[(s, s), (s, 8)]", "[(4, 4), (4, 8)]")),
    (PARTIAL, "DYN501", "return (x * scale).sum(dim)", ("opt(x, scale=s)", "opt(x, scale=0.5)")),
    (GLOBAL_LIST, "DYN514", "for h in HOOKS:", ("        HOOKS.append(act)\n", "")),
    (RETURNED_STEPS, "DYN501", "return x * (t + 1)", ("opt(x, t)", "opt(x, 2)")),
    (CARRIED_FROM_SIZE, "DYN501", "cache[:, pos:pos + 1] = k", ("        pos += 1\n", "")),
    (INVERSE_OF_STATE, "DYN501", "return g * inv_scale", ("        scaler.update(step % 2 == 0)\n", "")),
    (ENUM_ROWS, "DYN501", "return y.mean() if reduction is Reduction.MEAN else y.sum()",
     ("(1.0, Reduction.SUM)]", "(1.0, Reduction.MEAN)]")),
]


@pytest.mark.parametrize("source, code, guard, fixed", CASES)
def test_a_value_the_loop_changes_is_reported_at_the_guard(tmp_path, source, code, guard, fixed):
    pytest.importorskip("torch")
    found = [f.line for f in check_source(source, filename="probe.py").findings if f.code == code]
    assert found == [line_of(source, guard)]
    assert dynamo_guard_lines(tmp_path, source) == [line_of(source, guard)]


@pytest.mark.parametrize("source, code, guard, fixed", CASES)
def test_the_same_code_with_the_value_fixed_is_silent(tmp_path, source, code, guard, fixed):
    pytest.importorskip("torch")
    same = source.replace(*fixed)
    assert same != source
    assert not [f for f in check_source(same, filename="probe.py").findings if f.code == code]
    assert dynamo_guard_lines(tmp_path, same) == []


TENSOR_SLICES = '''import torch


def step(xb):
    return xb.sum()


def main():
    opt = torch.compile(step, backend="eager")
    x = torch.randn(10, 4)
    for s, e in ((0, 4), (4, 8), (8, 10)):
        opt(x[s:e])
'''


def test_a_slice_of_a_tensor_is_no_list_whose_length_is_guarded(tmp_path):
    """`x[s:e]` of a tensor is a tensor: its new size is the expected first shape change (a size guard at the
    `def`, then dynamic), not the length guard of a list argument (DYN507)."""
    pytest.importorskip("torch")
    assert [f for f in check_source(TENSOR_SLICES, filename="probe.py").findings if f.code == "DYN507"] == []
    assert dynamo_guard_lines(tmp_path, TENSOR_SLICES, lineless=True) == [line_of(TENSOR_SLICES, "def step(xb):")]


SETTER_OF_TWO = '''import torch

FAST = False
CHECK = False


def configure(check=None, fast=None):
    global CHECK, FAST
    if check is not None:
        CHECK = check
    if fast is not None:
        FAST = fast


def act(x):
    y = torch.tanh(x) if FAST else torch.sigmoid(x)
    if CHECK:
        y = y.clamp(-1, 1)
    return y


def main():
    opt = torch.compile(act, backend="eager")
    x = torch.randn(4)
    for step in range(4):
        if step == 1:
            configure(check=True)
        if step == 2:
            configure(fast=True)
        opt(x)
'''


def test_each_global_a_setter_changes_is_reported_at_its_own_guard(tmp_path):
    """`configure(check=True)` then `configure(fast=True)`: each call changes the global it is given a value
    for (the other keeps its value), and each global is guarded at its own first read (DYN514)."""
    pytest.importorskip("torch")
    guards = [line_of(SETTER_OF_TWO, "y = torch.tanh(x) if FAST else torch.sigmoid(x)"),
              line_of(SETTER_OF_TWO, "if CHECK:")]
    found = sorted({f.line for f in check_source(SETTER_OF_TWO, filename="probe.py").findings if f.code == "DYN514"})
    assert found == guards
    assert sorted(set(dynamo_guard_lines(tmp_path, SETTER_OF_TWO))) == guards
    # only `check` is ever given: FAST keeps its value and is not reported
    one = SETTER_OF_TWO.replace("configure(fast=True)", "configure(check=False)")
    assert sorted({f.line for f in check_source(one, filename="probe.py").findings if f.code == "DYN514"}) == \
        [line_of(SETTER_OF_TWO, "if CHECK:")]


NO_GRAD_SAMPLER = '''import torch


class Denoiser(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x)


def step(model, x, t):
    return x - 0.1 * model(x) * t


def sample(model, steps):
    opt = torch.compile(step, backend="eager")
    x = torch.randn(2, 4)
    for t in range(steps):
        x = opt(model, x, 0.5)
    return x


def main():
    model = Denoiser()
    with torch.no_grad():
        sample(model, 3)
'''


def test_a_result_fed_back_under_no_grad_in_the_caller_does_not_come_back_requiring_grad(tmp_path):
    """`x = opt(model, x, ...)` in a loop of a function every call of which is made under `torch.no_grad()`:
    what the module returns does not require grad, so the fed-back `x` is not guarded anew (no DYN501)."""
    pytest.importorskip("torch")
    assert [f for f in check_source(NO_GRAD_SAMPLER, filename="probe.py").findings if f.code == "DYN501"] == []
    assert dynamo_guard_lines(tmp_path, NO_GRAD_SAMPLER, lineless=True) == []
    with_grad = NO_GRAD_SAMPLER.replace("    with torch.no_grad():\n        sample(model, 3)", "    sample(model, 3)")
    assert [f.line for f in check_source(with_grad, filename="probe.py").findings if f.code == "DYN501"] == \
        [line_of(with_grad, "def step(model, x, t):")]
    assert dynamo_guard_lines(tmp_path, with_grad, lineless=True) == [line_of(with_grad, "def step(model, x, t):")]


def test_each_field_the_records_of_a_sweep_change_first_is_guarded_where_it_is_read(tmp_path):
    """Records of one class handed over one at a time: each attribute the compiled code reads is guarded by value
    where it is first read, and a new record is checked against every graph kept, failing at the first attribute
    read that differs. `bias` changes only beside `act`, read before it: no guard of its own fails."""
    pytest.importorskip("torch")
    expected = [line_of(RECORD_SWEEP, "y = torch.relu(x) if"), line_of(RECORD_SWEEP, "return y * cfg.scale")]
    assert dynamo_guard_lines(tmp_path, RECORD_SWEEP) == expected
    findings = check_source(RECORD_SWEEP, filename="probe.py").findings
    assert sorted(f.line for f in findings if f.code == "DYN501") == expected
    same = RECORD_SWEEP.replace('act="tanh", bias=0.5), BlockConfig(scale=2.0)', 'act="relu"), BlockConfig()')
    assert dynamo_guard_lines(tmp_path, same) == []
    assert not [f for f in check_source(same, filename="probe.py").findings if f.code == "DYN501"]


FIELDS_HANDED = '''from dataclasses import dataclass
from typing import Optional

import torch


@dataclass
class Decode:
    steps: int = 2
    temperature: float = 1.0
    top_k: Optional[int] = None


def sample(logits, temperature, top_k):
    logits = logits / temperature
    if top_k is not None:
        kth = torch.topk(logits, top_k).values[:, -1:]
        logits = logits.masked_fill(logits < kth, -1e4)
    return logits.softmax(-1)


def generate(fn, logits, cfg):
    for _ in range(cfg.steps):
        logits = fn(logits, cfg.temperature, cfg.top_k)
    return logits


def main():
    fn = torch.compile(sample, backend="eager")
    for cfg in [Decode(), Decode(temperature=0.7, top_k=8), Decode(temperature=1.3, top_k=4)]:
        generate(fn, torch.randn(2, 16), cfg)
'''


def test_fields_of_the_records_a_loop_hands_to_a_function_that_passes_them_on(tmp_path):
    """`generate(fn, x, cfg)` for each record, `fn(logits, cfg.temperature, cfg.top_k)` inside: Dynamo checks
    whether `top_k` is None before it checks values, and `temperature`, changed at the first recompile, is
    dynamic from then on: only `top_k`'s guard fails (torch 2.13)."""
    pytest.importorskip("torch")
    expected = [line_of(FIELDS_HANDED, "if top_k is not None:")]
    assert dynamo_guard_lines(tmp_path, FIELDS_HANDED) == expected
    findings = check_source(FIELDS_HANDED, filename="probe.py").findings
    assert sorted(f.line for f in findings if f.code == "DYN501") == expected
    same = FIELDS_HANDED.replace("top_k=8), Decode(temperature=1.3, top_k=4)", "top_k=8), Decode(top_k=8)")
    same = same.replace("[Decode(), ", "[")
    assert dynamo_guard_lines(tmp_path, same) == [line_of(FIELDS_HANDED, "logits = logits / temperature")]
    assert sorted(f.line for f in check_source(same, filename="probe.py").findings if f.code == "DYN501") == \
        [line_of(FIELDS_HANDED, "logits = logits / temperature")]


TEST_METHOD = '''import unittest

import torch


class RecompileTests(unittest.TestCase):
    def test_int_arg(self):
        @torch.compile(backend="eager")
        def shift(x, k):
            return torch.roll(x, k, dims=-1) * k

        x = torch.randn(4, 8)
        for k in range(1, 4):
            self.assertEqual(shift(x, k).shape, x.shape)


def main():
    RecompileTests("test_int_arg").test_int_arg()
'''


def test_a_function_compiled_inside_a_test_method_is_guarded_where_it_reads_the_value(tmp_path):
    """`@torch.compile def shift(x, k)` defined inside a method of a test class and called in the method's loop:
    the finding stands at the guard in the nested function (`k == 1`), as for one inside a plain function."""
    pytest.importorskip("torch")
    expected = [line_of(TEST_METHOD, "return torch.roll(x, k, dims=-1) * k")]
    assert dynamo_guard_lines(tmp_path, TEST_METHOD) == expected
    findings = check_source(TEST_METHOD, filename="probe.py").findings
    assert [f.line for f in findings if f.code == "DYN501"] == expected


BUILT_FIELDS = '''from dataclasses import dataclass, replace

import torch


@dataclass
class Curriculum:
    scale: float = 1.0
    levels: int = 2
    clip: bool = False


def loss(x, cfg):
    y = x * cfg.scale + cfg.levels
    if cfg.clip:
        y = y.clamp(-1, 1)
    return y.sum()


def main():
    opt = torch.compile(loss, backend="eager")
    cfg = Curriculum()
    for epoch in range(5):
        cfg = replace(cfg, scale=1.0 + 0.5 * epoch, levels=2 + epoch, clip=epoch >= 3)
        opt(torch.randn(4), cfg)
'''


def test_a_record_the_loop_rebuilds_from_its_variable_fails_at_the_first_number_and_at_each_flag(tmp_path):
    """`cfg = replace(cfg, scale=..., levels=..., clip=epoch >= 3)` each epoch: the numbers change together, so
    the first of them read fails at the first change and they are dynamic after it; the flag fails its own
    guard when it flips (torch 2.13)."""
    pytest.importorskip("torch")
    expected = [line_of(BUILT_FIELDS, "y = x * cfg.scale"), line_of(BUILT_FIELDS, "if cfg.clip:")]
    assert dynamo_guard_lines(tmp_path, BUILT_FIELDS) == expected
    findings = check_source(BUILT_FIELDS, filename="probe.py").findings
    assert sorted(f.line for f in findings if f.code == "DYN501") == expected
    same = BUILT_FIELDS.replace("scale=1.0 + 0.5 * epoch, levels=2 + epoch, clip=epoch >= 3", "scale=2.0")
    assert dynamo_guard_lines(tmp_path, same) == []
    assert not [f for f in check_source(same, filename="probe.py").findings if f.code == "DYN501"]


COSINE_LR = '''import math

import torch


def step(w, g, lr):
    return w - lr * g


def lr_at(i, base=0.1, total=6):
    return 0.5 * base * (1.0 + math.cos(math.pi * i / total))


def main():
    opt = torch.compile(step, backend="eager")
    w = torch.zeros(4)
    for i in range(4):
        w = opt(w, torch.ones(4), lr_at(i))
'''


def test_a_schedule_computed_with_math_functions_is_a_new_float_each_step(tmp_path):
    """`lr_at(i)` returning `0.5 * base * (1.0 + math.cos(math.pi * i / total))`: a Python float (a `math`
    function of numbers is one), new at each step: guarded where the compiled function reads `lr` (`lr ==
    0.1`), once, then dynamic."""
    pytest.importorskip("torch")
    expected = [line_of(COSINE_LR, "return w - lr * g")]
    assert dynamo_guard_lines(tmp_path, COSINE_LR) == expected
    assert [f.line for f in check_source(COSINE_LR, filename="probe.py").findings if f.code == "DYN501"] == expected


GRAD_REVERSE = '''import torch
from torch import nn


class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return grad.neg() * ctx.alpha, None


def grad_reverse(x, alpha):
    return GradReverse.apply(x, alpha)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 2)

    def forward(self, x, alpha):
        return self.lin(grad_reverse(x, alpha))


def main():
    model = torch.compile(Net(), backend="eager")
    for step in range(4):
        alpha = 2.0 / (1.0 + step) - 1.0
        model(torch.randn(3, 4), alpha).sum().backward()
'''


def test_a_number_saved_on_an_autograd_functions_ctx_is_guarded_where_it_is_saved(tmp_path):
    """`GradReverse.apply(x, alpha)`: Dynamo traces the Function's `forward(ctx, x, alpha)` with what `apply`
    was given, and guards the number where `ctx.alpha = alpha` saves it for the backward (torch 2.13)."""
    pytest.importorskip("torch")
    expected = [line_of(GRAD_REVERSE, "ctx.alpha = alpha")]
    assert dynamo_guard_lines(tmp_path, GRAD_REVERSE) == expected
    assert [f.line for f in check_source(GRAD_REVERSE, filename="probe.py").findings if f.code == "DYN501"] == expected


ENUM_CLASS_LOOP = '''import enum

import torch


class Similarity(enum.Enum):
    COSINE = "cosine"
    DOT = "dot"


def score(a, b, sim):
    if sim is Similarity.COSINE:
        a, b = a / a.norm(), b / b.norm()
    return (a * b).sum()


def main():
    opt = torch.compile(score, backend="eager")
    for sim in Similarity:
        opt(torch.randn(4), torch.randn(4), sim)
'''


def test_a_loop_over_an_enum_class_hands_each_member_in_turn(tmp_path):
    """`for sim in Similarity:` binds each member of the Enum in turn: Dynamo guards the member by identity
    where the compiled function first uses it, and the next member compiles again."""
    pytest.importorskip("torch")
    expected = [line_of(ENUM_CLASS_LOOP, "if sim is Similarity.COSINE:")]
    assert dynamo_guard_lines(tmp_path, ENUM_CLASS_LOOP) == expected
    assert [f.line for f in check_source(ENUM_CLASS_LOOP, filename="probe.py").findings
            if f.code == "DYN501"] == expected


HELPER_OF_STATE = '''import torch


class Env:
    def __init__(self, limit=12):
        self.limit = limit
        self.elapsed = 0

    def step(self):
        self.elapsed += 1


def time_remaining(env):
    return env.limit - env.elapsed


def policy(obs, steps_left):
    return obs * steps_left


def main():
    act = torch.compile(policy, backend="eager")
    env = Env()
    for _ in range(3):
        act(torch.ones(2), time_remaining(env))
        env.step()
'''


def test_a_number_a_helper_computes_from_an_object_the_loop_advances(tmp_path):
    """`time_remaining(env)` returns `env.limit - env.elapsed`, and `env.step()` advances `self.elapsed` each
    iteration: a new int at each call, guarded where the compiled function reads it (once, then dynamic)."""
    pytest.importorskip("torch")
    expected = [line_of(HELPER_OF_STATE, "return obs * steps_left")]
    assert dynamo_guard_lines(tmp_path, HELPER_OF_STATE) == expected
    assert [f.line for f in check_source(HELPER_OF_STATE, filename="probe.py").findings
            if f.code == "DYN501"] == expected
    same = HELPER_OF_STATE.replace("        env.step()\n", "")
    assert dynamo_guard_lines(tmp_path, same) == []
    assert not [f for f in check_source(same, filename="probe.py").findings if f.code == "DYN501"]
