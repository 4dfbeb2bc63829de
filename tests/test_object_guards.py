"""What Dynamo guards on an object the compiled code reads, under real Dynamo at the finding's line:
- its type: a parameter handed instances of two classes fails `___check_type_id` at the compiled code's first
  read of it (DYN505; modules of two classes are the rule's own example);
- the numbers it was built with: two instances of one class whose kept constants differ fail the value guard
  at the first read of the attribute, in the compiled function or in the method it calls on the object (DYN508);
  a dataclass's fields alike;
- a number a method of its class sets, called in *another file* between two calls of a compiled method
  (`scheduler.set_timesteps(n)`; DYN514, reported at the guard in the class's file);
- an attribute of a submodule set between calls (`model.sa1.npoint = 48`; DYN506, in the same file or in
  another, reported at the guard in the module's file), guarded where the
  submodule's `forward` reads it;
- the length of the tuple a `*args` parameter gets (DYN505), guarded at its first read, and whether two
  parameters get the same tensor (`attend(x, x, x)`, then `attend(x, memory, memory)`: `k is q`);
- an attribute that the compiled code sets lazily as one of a tuple of targets (`self.scales, self.mapper =
  setup(x)`; DYN306).
Each also has its counterpart that Dynamo compiles once, where dynlint is silent."""
import json
import textwrap

import pytest

from conftest import dynamo_guard_lines, line_of, observe_package, write_tree
from dynlint.api import check_source

TYPES = '''
import torch


class Clip:
    def __init__(self, low):
        self.low = low

    def apply(self, x):
        return x.clamp(min=self.low)


class Floor(Clip):
    def apply(self, x):
        return x.floor()


def transform(op, x):
    h = x.cos()
    return op.apply(h)


def main():
    x = torch.randn(6)
    g = torch.compile(transform, backend="eager")
    g(Clip(0.0), x)
    g(Floor(0.0), x)
'''

KEPT = '''
from dataclasses import dataclass

import torch


class Clip:
    def __init__(self, low, high=1.0):
        self.low = low
        self.high = high

    def apply(self, x):
        return x.clamp(self.low, self.high)


@dataclass
class Sampling:
    temperature: float = 1.0
    top_k: int = 0


def transform(op, x):
    h = x.cos()
    return op.apply(h)


def sample(logits, params):
    if params.top_k > 0:
        logits = logits.topk(params.top_k).values
    return torch.softmax(logits / params.temperature, dim=-1)


def main():
    x = torch.randn(8)
    g = torch.compile(transform, backend="eager")
    g(Clip(0.0), x)
    g(Clip(-0.5), x)
    s = torch.compile(sample, backend="eager")
    s(x, Sampling(0.7))
    s(x, Sampling(0.7, top_k=3))
'''


def _found(source: str, code: str) -> list:
    return sorted(f.line for f in check_source(source, filename="probe.py").findings if f.code == code)


@pytest.mark.parametrize("source, code, guards", [
    (TYPES, "DYN505", ["return op.apply(h)"]),      # (modules of two classes: DYN505's example)
    (KEPT, "DYN508", ["return x.clamp(self.low, self.high)", "if params.top_k > 0:"]),
], ids=["types", "kept-constants"])
def test_what_an_object_argument_is_guarded_on_is_reported_at_the_guard(tmp_path, source, code, guards):
    pytest.importorskip("torch")
    expected = sorted(line_of(source, g) for g in guards)
    assert _found(source, code) == expected
    assert dynamo_guard_lines(tmp_path, source) == expected


@pytest.mark.parametrize("source, same", [
    (TYPES, TYPES.replace("g(Floor(0.0), x)", "g(Clip(0.0), x)")),
    (KEPT, KEPT.replace("g(Clip(-0.5), x)", "g(Clip(0.0, high=1.0), x)").replace(
        "s(x, Sampling(0.7, top_k=3))", "s(x, Sampling(temperature=0.7))")),
], ids=["types", "kept-constants"])
def test_objects_alike_for_dynamo_are_not_reported(tmp_path, source, same):
    pytest.importorskip("torch")
    assert _found(same, "DYN505") == _found(same, "DYN508") == []
    assert dynamo_guard_lines(tmp_path, same) == []


SCHEDULER = '''
import torch


class Scheduler:
    def __init__(self, train_steps=1000):
        self.train_steps = train_steps
        self.steps = None

    def set_timesteps(self, steps):
        self.steps = steps

    def step(self, x, t):
        if self.steps is None:
            raise ValueError("call set_timesteps first")
        ratio = self.train_steps // self.steps
        return x * (t - ratio)
'''

SAMPLER = '''
import torch

from pkg.scheduler import Scheduler


@torch.no_grad()
def sample(scheduler, step_fn, x, steps=10):
    scheduler.set_timesteps(steps)
    for t in range(2):
        x = step_fn(x, torch.tensor(t))
    return x


def main():
    scheduler = Scheduler()
    step_fn = torch.compile(scheduler.step, backend="eager")
    x = torch.randn(4)
    sample(scheduler, step_fn, x, steps={first})
    sample(scheduler, step_fn, x, steps={second})
'''


def _package(tmp_path, **files):
    """A project whose package `pkg` holds `files` (module name -> text)."""
    write_tree(tmp_path, {"pyproject.toml": "[tool.dynlint]\n", "pkg/__init__.py": "",
                          **{f"pkg/{name}.py": text for name, text in files.items()}})
    return tmp_path / "pkg"


def _sampler_project(tmp_path, first: int, second: int):
    return _package(tmp_path, scheduler=SCHEDULER, run=textwrap.dedent(SAMPLER).format(first=first, second=second))


@pytest.mark.parametrize("first, second", [(4, 8), (4, 4)])
def test_a_setter_called_in_another_file_is_reported_at_the_guard(cli, tmp_path, monkeypatch, first, second):
    pytest.importorskip("torch")
    pkg = _sampler_project(tmp_path, first, second)
    out = json.loads(cli("check", "pkg", "--no-cache", "--format", "json", cwd=tmp_path).stdout)["findings"]
    found = [(f["path"], f["line"]) for f in out if f["code"] == "DYN514"]
    obs = observe_package(tmp_path, monkeypatch, pkg / "scheduler.py", "__import__('pkg.run').run.main()")
    guarded = sorted(set().union(*obs.guard_lines(str(pkg / "scheduler.py"))))
    if first == second:
        assert found == guarded == []
        return
    assert guarded == [line_of(SCHEDULER, "if self.steps is None:")]
    assert found == [("pkg/scheduler.py", guarded[0])]
    related = next(f for f in out if f["code"] == "DYN514")["related"]
    assert [(r["path"], r["line"]) for r in related] == [
        ("pkg/run.py", line_of(SAMPLER, "scheduler.set_timesteps(steps)"))]


LAZY = '''
import torch


def setup(x):
    return [1.0, 0.5], x.shape[-1]


class Pool(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scales = None
        self.width = None

    def forward(self, x):
        if self.scales is None or self.width is None:
            self.scales, self.width = setup(x)
        return x * self.scales[0]


def main():
    pool = torch.compile(Pool(), backend="eager")
    for _ in range(3):
        pool(torch.randn(4))
'''


def test_an_attribute_set_lazily_as_one_of_a_tuple_is_reported_at_the_guard(tmp_path):
    pytest.importorskip("torch")
    guard = line_of(LAZY, "if self.scales is None")
    assert _found(LAZY, "DYN306") == [guard]
    assert dynamo_guard_lines(tmp_path, LAZY) == [guard]


SUBMODULE = '''
import torch


class SetAbstraction(torch.nn.Module):
    def __init__(self, npoint):
        super().__init__()
        self.npoint = npoint
        self.fc = torch.nn.Linear(3, 8)

    def forward(self, x):
        idx = torch.arange(self.npoint)
        return self.fc(x[:, idx])


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.sa1 = SetAbstraction(32)

    def forward(self, x):
        return self.sa1(x).mean()


def main():
    model = Net()
    compiled = torch.compile(model, backend="eager")
    x = torch.randn(2, 64, 3)
    compiled(x)
    model.sa1.npoint = 48
    compiled(x)
'''


def test_an_attribute_of_a_submodule_set_between_calls_is_reported_at_the_guard(tmp_path):
    pytest.importorskip("torch")
    guard = line_of(SUBMODULE, "idx = torch.arange(self.npoint)")
    assert _found(SUBMODULE, "DYN506") == [guard]
    assert dynamo_guard_lines(tmp_path, SUBMODULE) == [guard]
    # set once, before the first call: one graph
    before = SUBMODULE.replace("    compiled(x)\n    model.sa1.npoint = 48\n", "    model.sa1.npoint = 48\n")
    assert _found(before, "DYN506") == []
    assert dynamo_guard_lines(tmp_path, before) == []


VARARGS = '''
import torch


def combine(*feats):
    out = feats[0]
    for f in feats[1:]:
        out = out + f
    return out


def main():
    fused = torch.compile(combine, backend="eager")
    a, b = torch.randn(4), torch.randn(4)
    fused(a, b)
    fused(a, b, a + b)
'''


def test_varargs_of_another_length_are_reported_at_the_guard(tmp_path):
    pytest.importorskip("torch")
    guard = line_of(VARARGS, "out = feats[0]")
    assert _found(VARARGS, "DYN505") == [guard]
    assert dynamo_guard_lines(tmp_path, VARARGS) == [guard]
    same = VARARGS.replace("fused(a, b, a + b)", "fused(b, a)")
    assert _found(same, "DYN505") == []
    assert dynamo_guard_lines(tmp_path, same) == []


ALIASED = '''
import torch


def attend(q, k, v):
    scores = q @ k.t()
    return scores.softmax(-1) @ v


def main():
    fused = torch.compile(attend, backend="eager")
    x, memory = torch.randn(4, 8), torch.randn(4, 8)
    fused(x, x, x)
    fused(x, memory, memory)
'''


def test_one_tensor_for_two_parameters_then_two_is_reported_at_the_guard(tmp_path):
    pytest.importorskip("torch")
    guard = line_of(ALIASED, "scores = q @ k.t()")
    assert _found(ALIASED, "DYN505") == [guard]
    assert dynamo_guard_lines(tmp_path, ALIASED) == [guard]
    same = ALIASED.replace("fused(x, x, x)", "fused(memory, x, x)")     # k and v alike at both calls
    assert _found(same, "DYN505") == []
    assert dynamo_guard_lines(tmp_path, same) == []


FRESH = '''
import torch


def blend(a, b):
    return (a * 2 + b).sum()


def main():
    f = torch.compile(blend, backend="eager")
    w = torch.ones(3)
    f(w, w)
    f(w, torch.zeros(3))
'''


def test_a_tensor_made_at_the_call_is_another_object(tmp_path):
    """`f(w, torch.zeros(3))`: what a torch factory returns is a new tensor, not `w`; the guard `a is b` of the
    call passing `w` twice fails where `b` is first read. `w.contiguous()` may be `w` itself: not taken for
    another tensor."""
    pytest.importorskip("torch")
    guard = line_of(FRESH, "return (a * 2 + b)")
    assert dynamo_guard_lines(tmp_path, FRESH) == [guard]
    assert _found(FRESH, "DYN505") == [guard]
    assert _found(FRESH.replace("torch.zeros(3))", "w.contiguous())"), "DYN505") == []


TRAIN = '''
import torch

from pkg.model import Net


def main():
    model = Net()
    compiled = torch.compile(model, backend="eager")
    x = torch.randn(2, 64, 3)
    compiled(x)
    model.sa1.npoint = 48               # through the module's submodule, in another file
    compiled(x)
'''


def test_an_attribute_set_in_another_file_is_reported_at_the_guard(cli, tmp_path, monkeypatch):
    pytest.importorskip("torch")
    model = SUBMODULE[:SUBMODULE.index("def main")]
    pkg = _package(tmp_path, model=model, run=TRAIN)
    out = json.loads(cli("check", "pkg", "--no-cache", "--format", "json", cwd=tmp_path).stdout)["findings"]
    found = [(f["path"], f["line"], [(r["path"], r["line"]) for r in f["related"]]) for f in out
             if f["code"] == "DYN506"]
    obs = observe_package(tmp_path, monkeypatch, pkg / "model.py", "__import__('pkg.run').run.main()")
    guard = line_of(model, "idx = torch.arange(self.npoint)")
    assert sorted(set().union(*obs.guard_lines(str(pkg / "model.py")))) == [guard]
    assert found == [("pkg/model.py", guard, [("pkg/run.py", line_of(TRAIN, "model.sa1.npoint = 48"))])]
    # set before the first call: nothing to report, one graph
    (pkg / "run.py").write_text(TRAIN.replace("    compiled(x)\n    model.sa1.npoint", "    model.sa1.npoint"))
    out = json.loads(cli("check", "pkg", "--no-cache", "--format", "json", cwd=tmp_path).stdout)["findings"]
    assert [f for f in out if f["code"] == "DYN506"] == []
    obs = observe_package(tmp_path, monkeypatch, pkg / "model.py", "__import__('pkg.run').run.main()")
    assert obs.recompiles == []


OBSERVER = '''
import torch


class Observer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.low = None

    def forward(self, x):
        {first}
        if self.low is None:
            self.low = lo
        return {result}


def main():
    obs = torch.compile(Observer(), backend="eager")
    for _ in range(3):
        obs(torch.randn(8))
'''


@pytest.mark.parametrize("first, result, guarded", [
    ("lo = x.min().item()", "x", False),    # the code resumed after the break does no tensor work: not compiled
    ("lo = -1.0", "x * 2", True),
])
def test_a_lazily_set_attribute_after_a_break_is_guarded_only_where_dynamo_compiles(tmp_path, first, result,
                                                                                      guarded):
    pytest.importorskip("torch")
    source = OBSERVER.replace("{first}", first).replace("{result}", result)
    expected = [line_of(source, "if self.low is None:")] if guarded else []
    assert _found(source, "DYN306") == expected
    assert dynamo_guard_lines(tmp_path, source) == expected


HELD = '''
import torch


class Decoder(torch.nn.Module):
    def forward(self, x, past=None):
        y = x.sin()
        if past is not None:
            y = y + past
        return y, y


class Greedy:
    def __init__(self, decoder, steps):
        self.decoder = decoder
        self.steps = steps

    def _step(self, x, hidden):
        return self.decoder(x, hidden)

    def run(self, x):
        hidden = None
        for _ in range(self.steps):
            out, new = self._step(x, hidden)
            hidden = new
        return out


def main():
    decoder = Decoder()
    Greedy(torch.compile(decoder, backend="eager"), 3).run(torch.randn(4))
'''


def test_a_loop_carried_none_reaching_a_compiled_module_an_object_keeps_is_reported_at_the_guard(tmp_path):
    """The compiled module reaches the loop as an `__init__` argument the object keeps (`self.decoder =
    decoder`), the carried state through a method that hands it on: the first call gets None, the next a
    tensor; Dynamo guards `past is None` at forward's first read of it."""
    pytest.importorskip("torch")
    guard = line_of(HELD, "if past is not None:")
    assert _found(HELD, "DYN505") == [guard]
    assert dynamo_guard_lines(tmp_path, HELD) == [guard]
    same = HELD.replace("hidden = None\n", "hidden = torch.zeros(4)\n")     # a tensor from the first call on
    assert _found(same, "DYN505") == []
    assert dynamo_guard_lines(tmp_path, same) == []
    eager = HELD.replace("torch.compile(decoder, backend=\"eager\")", "decoder")
    assert _found(eager, "DYN505") == []


KEPT_COUNTERS = '''
import torch


def count_dict(x, meta):
    meta["n"] += 1
    return x * meta["n"]


def count_list(x, state):
    state[0] += 1
    return x * state[0]


class Acc:
    def __init__(self):
        self.count = 0


def count_attr(x, acc):
    acc.count += 1
    return x * acc.count


def main():
    x = torch.randn(4)
    a = torch.compile(count_dict, backend="eager")
    b = torch.compile(count_list, backend="eager")
    c = torch.compile(count_attr, backend="eager")
    meta = {"n": 0}
    state = [0]
    acc = Acc()
    for _ in range(3):
        a(x, meta)
        b(x, state)
        c(x, acc)
'''


def test_a_number_the_compiled_code_changes_in_a_container_the_caller_keeps_is_reported_at_the_guard(tmp_path):
    """`meta["n"] += 1`, `state[0] += 1`, `acc.count += 1` in compiled code, on a dict, a list or an object the
    caller made once and hands in again (three compiled aliases in one function, each resolved to its own
    function): Dynamo guards the number where it is read and the next call finds the new one (DYN306)."""
    pytest.importorskip("torch")
    guards = [line_of(KEPT_COUNTERS, s) for s in ('meta["n"] += 1', "state[0] += 1", "acc.count += 1")]
    assert _found(KEPT_COUNTERS, "DYN306") == guards
    assert dynamo_guard_lines(tmp_path, KEPT_COUNTERS) == guards
    fresh = KEPT_COUNTERS.replace("a(x, meta)", 'a(x, {"n": 0})').replace("b(x, state)", "b(x, [0])").replace(
        "c(x, acc)", "c(x, Acc())")            # a new container at each call: every call reads 0
    assert _found(fresh, "DYN306") == []
    assert dynamo_guard_lines(tmp_path, fresh) == []


EMA = '''
import math

import torch


class EMA:
    def __init__(self, decay=0.999, tau=20.0):
        self.decay = decay
        self.tau = tau
        self.updates = 0
        self._apply = torch.compile(self._lerp_all, backend="eager")

    def current_decay(self):
        return self.decay * (1 - math.exp(-self.updates / self.tau))

    def _lerp_all(self, shadow, params):
        d = self.current_decay()
        for e, p in zip(shadow, params):
            e.mul_(d).add_(p, alpha=1 - d)

    def update(self, shadow, params):
        self.updates += 1
        self._apply(shadow, params)


def main():
    ema = EMA()
    shadow, params = [torch.zeros(3)], [torch.ones(3)]
    for _ in range(3):
        ema.update(shadow, params)
'''


def test_a_counter_a_method_advances_before_calling_its_compiled_method_is_reported_at_the_guard(tmp_path):
    """`self.updates += 1` in `update`, which then calls `self._apply` (its own method compiled in `__init__`),
    read through `self.current_decay()`: each call hands the compiled method a new count (DYN514, where Dynamo
    guards `self.updates`)."""
    pytest.importorskip("torch")
    guard = line_of(EMA, "return self.decay * (1 - math.exp(-self.updates / self.tau))")
    assert _found(EMA, "DYN514") == [guard]
    assert guard in dynamo_guard_lines(tmp_path, EMA)
    fixed = EMA.replace("        self.updates += 1\n", "")
    assert _found(fixed, "DYN514") == []
    assert dynamo_guard_lines(tmp_path, fixed) == []


METRIC = '''
import torch


class Metric(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self._defaults = {}

    def add_state(self, name, default):
        self._defaults[name] = default
        setattr(self, name, default.clone())


class MeanError(Metric):
    def __init__(self):
        super().__init__()
        self.add_state("total", default=torch.tensor(0))
        self.add_state("error", default=torch.tensor(0.0))

    def update(self, preds, target):
        self.error += (preds - target).abs().sum()
        self.total += target.numel()


def main():
    metric = MeanError()
    update = torch.compile(metric.update, backend="eager")
    for _ in range(4):
        update(torch.randn(8), torch.randn(8))
'''


def test_state_made_by_setattr_is_not_taken_for_a_python_number(tmp_path):
    """`self.total += target.numel()` where `self.total` is made by `setattr(self, name, default.clone())` (a
    metric's `add_state`), never assigned by name: a tensor updated in place, traced, not guarded (real Dynamo:
    no recompile), and DYN306 says nothing."""
    pytest.importorskip("torch")
    assert dynamo_guard_lines(tmp_path, METRIC) == []
    assert not [f for f in check_source(METRIC, filename="probe.py").findings if f.code == "DYN306"]
